import type { ScanState } from '../core/state';

/**
 * The longest lease anyone takes. A lease that claims to last longer was taken by a clock that ran
 * ahead (or written by hand): it is treated as lapsed, so no clock can hold the state for good.
 */
export const MAX_LEASE_MS = 10 * 60_000;

/** True while `lease` still holds at `now`: not yet expired, and not longer than any lease is taken for. */
export function leaseHolds(lease: Lease, now: number): boolean {
  return lease.expiresAt > now && lease.expiresAt - now <= MAX_LEASE_MS;
}

/** Who may publish the step from one generation to the next, until when. */
export interface Lease {
  readonly owner: string;
  /** Epoch ms; a crashed holder's lease lapses then. */
  readonly expiresAt: number;
}

/** The state as loaded, with the generation conditional writes are checked against. */
export interface StoredState {
  readonly state: ScanState;
  /** 0 before the first save; each save adds one. */
  readonly generation: number;
  readonly lease: Lease | null;
}

/**
 * Where scans remember each other. Writes are conditional on the generation loaded, so two scans
 * never both advance from the same state: `claim` takes a lease before anything is published,
 * `save` writes the next generation and releases it, `release` gives it up unsaved (the publish
 * failed). A write that loses the race throws StateConflictError.
 */
export interface StateStore {
  /** For messages: the file path or `dynamodb:TABLE`. */
  readonly location: string;
  load(): Promise<StoredState>;
  /** Takes the lease on `generation`; fails when the state moved on or another live lease holds it. */
  claim(generation: number, lease: Lease): Promise<void>;
  /** Writes `state` as generation + 1 and releases the lease, which `owner` must hold on `loaded`. */
  save(state: ScanState, loaded: StoredState, owner: string): Promise<void>;
  /** Gives the lease up without writing (nothing was delivered). */
  release(generation: number, owner: string): Promise<void>;
}
