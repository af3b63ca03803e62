import { randomBytes } from 'node:crypto';
import type { Acknowledgement, ActionStore, DomainActions, Snooze } from '../core/actions';
import { type DomainMemory, type ScanState, StateConflictError } from '../core/state';
import { normalizeDomainName } from '../core/text';
import type { StateStore } from './state-store';
import { loadState } from './stateful-scan';

/** How long a snooze's write may hold the state's lease; a write takes milliseconds. */
const LEASE_MS = 15_000;
/** Tries before giving up when a scan holds the lease or moves the state on. */
const ATTEMPTS = 6;

/**
 * Snoozes and acknowledgements in the state store, beside each domain's memory: each change is
 * one conditional step of the store's own protocol (load, claim the lease on that generation,
 * save the next), so a scan running at the same moment either sees the action or re-reads the
 * state and then sees it; neither write is lost.
 */
export class StateActionStore implements ActionStore {
  readonly location: string;

  constructor(
    private readonly store: StateStore,
    /** The account the state belongs to (the reseller base URL), as the scan checks it. */
    private readonly scope: string,
    private readonly clock: () => number = Date.now,
    /** How often to try when a scan holds the lease, and the first wait (doubling). @default 6 tries from 200 ms */
    private readonly retry: { readonly attempts: number; readonly backoffMs: number } = {
      attempts: ATTEMPTS,
      backoffMs: 200,
    },
  ) {
    this.location = store.location;
  }

  snooze(domain: string, snooze: Snooze): Promise<void> {
    return this.change((actions) => ({ ...actions, snooze }), domain);
  }

  acknowledge(domain: string, acknowledged: Acknowledgement): Promise<void> {
    return this.change((actions) => ({ ...actions, acknowledged }), domain);
  }

  /** One conditional step: retried when a scan holds the lease or saved first. */
  private async change(update: (actions: DomainActions) => DomainActions, domain: string): Promise<void> {
    const owner = `web-${randomBytes(6).toString('hex')}`;
    for (let attempt = 1; ; attempt++) {
      const loaded = await loadState(this.store, this.scope);
      try {
        await this.store.claim(loaded.generation, { owner, expiresAt: this.clock() + LEASE_MS });
        await this.store.save(withActions(loaded.state, domain, update), loaded, owner);
        return;
      } catch (error) {
        if (!(error instanceof StateConflictError) || attempt >= this.retry.attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.retry.backoffMs * 2 ** (attempt - 1)));
      }
    }
  }
}

/**
 * The state with one domain's actions changed. The memory is found by normalised name (the
 * account may spell it in upper case); a domain with no memory yet (scanned without state so far)
 * gets one that holds only the actions, which the next scan fills in.
 */
function withActions(
  state: ScanState,
  domain: string,
  update: (actions: DomainActions) => DomainActions,
): ScanState {
  const wanted = normalizeDomainName(domain);
  const key = Object.keys(state.domains).find((name) => normalizeDomainName(name) === wanted) ?? wanted;
  const memory: DomainMemory = state.domains[key] ?? { watched: {}, finding: null, alerted: null };
  const actions = update(memory.actions ?? {});
  const { actions: _old, ...rest } = memory;
  const next: DomainMemory = actions.snooze || actions.acknowledged ? { ...rest, actions } : rest;
  return { ...state, domains: { ...state.domains, [key]: next } };
}
