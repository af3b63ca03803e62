import type { DomainMemory, NextState, ScanMemory, ScanState, StateHead } from '../core/memory/state';

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

/** The state as loaded whole, with the generation conditional writes are checked against. */
export interface StoredState {
  readonly state: ScanState;
  /** 0 before the first save; each save adds one. */
  readonly generation: number;
  readonly lease: Lease | null;
}

/**
 * The state as opened for a scan: everything but the domains, which {@link StateStore.readDomains}
 * streams into a ScanMemory while the account is read. Small: the header, the flagged contacts.
 */
export interface OpenedState {
  readonly head: StateHead;
  /** 0 before the first save; each save adds one. */
  readonly generation: number;
  readonly lease: Lease | null;
}

/** What to write: the account-wide part, and the domains' next memories when a scan compared them. */
export interface NextToSave {
  readonly head: StateHead;
  /** The memory the domains were read into and compared in; absent, no domain changes (a rebind). */
  readonly memory?: NextState['memory'];
}

/**
 * Where scans remember each other. Writes are conditional on the generation loaded, so two scans
 * never both advance from the same state: `claim` takes a lease before anything is published,
 * `saveNext` writes the next generation and releases it, `release` gives it up unsaved (the publish
 * failed). A write that loses the race throws StateConflictError.
 *
 * A scan opens the state (small), checks it, then reads the account and the remembered domains at
 * once into one ScanMemory: nothing holds the whole state as objects. `load` and `save` do the same
 * for a state handled whole (tests, small tools).
 */
export interface StateStore {
  /** For messages: the file path or `dynamodb:TABLE`. */
  readonly location: string;
  /** The account-wide part of the state, generation and lease. */
  open(): Promise<OpenedState>;
  /**
   * Adds every remembered domain of `opened` to `memory` as its prior memory. Stops early, without
   * an error of its own, when `signal` aborts (the scan it runs beside failed).
   */
  readDomains(opened: OpenedState, memory: ScanMemory, signal?: AbortSignal): Promise<void>;
  /**
   * The memory of one domain's key in `opened` (undefined when it has none), reading no more than
   * that domain's share of the state: a link's page must not read a million domains for one.
   */
  readDomain(opened: OpenedState, key: string): Promise<DomainMemory | undefined>;
  /** Takes the lease on `generation`; fails when the state moved on or another live lease holds it. */
  claim(generation: number, lease: Lease): Promise<void>;
  /**
   * Writes what changed from `opened` to `next` as generation + 1 and releases the lease, which
   * `owner` must hold on `opened`.
   */
  saveNext(next: NextToSave, opened: OpenedState, owner: string): Promise<void>;
  /**
   * Changes one domain's memory alone (a snooze, an acknowledgement) as generation + 1 and releases
   * the lease, which `owner` must hold on `opened`. `update` gets the memory of the domain's key
   * (undefined when it has none) and returns the next one.
   */
  changeDomain(
    key: string,
    update: (memory: DomainMemory | undefined) => DomainMemory,
    opened: OpenedState,
    owner: string,
  ): Promise<void>;
  /** Gives the lease up without writing (nothing was delivered). */
  release(generation: number, owner: string): Promise<void>;
  /** The whole state, its domains as objects. */
  load(): Promise<StoredState>;
  /** Writes `state` as generation + 1 and releases the lease, which `owner` must hold on `loaded`. */
  save(state: ScanState, loaded: StoredState, owner: string): Promise<void>;
}
