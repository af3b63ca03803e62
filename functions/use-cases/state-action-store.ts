import { randomBytes } from 'node:crypto';
import type { Acknowledgement, ActionStore, DomainActions, Snooze } from '../core/memory/actions';
import type { DomainMemory, StateHead } from '../core/memory/state';
import { domainKey } from '../core/memory/state-bounds';
import { accountFor, type StateSelector, type StateStore } from './state-store';

/** Tries before giving up when a scan holds the lease or moves the state on. */
const ATTEMPTS = 6;
const BACKOFF_MS = 200;
/** The longest an action waits for a scan's lease over all its tries (each wait doubling): the web function's timeout holds it. */
export const ACTION_WAIT_MS = BACKOFF_MS * (2 ** (ATTEMPTS - 1) - 1);

export interface StateActionStoreOptions {
  /** How often to try when a scan holds the lease, and the first wait (doubling). @default 6 tries from 200 ms */
  readonly retry?: { readonly attempts: number; readonly backoffMs: number };
  /**
   * The API key the domain was looked up with: a state bound to another account is refused, so no
   * snooze of one account lands in another's memory (where its domain would look like it left).
   */
  readonly apiKey?: () => Promise<string>;
  /** What names the state to `sentinel state rebind`, for the refusal of a rotated key. @default its location */
  readonly rebind?: StateSelector;
}

/**
 * Snoozes and acknowledgements in the state store, beside each domain's memory: each change is
 * one conditional step of the store's own protocol (StateStore.updateDomain), so a scan running
 * at the same moment either sees the action or re-reads the state and then sees it; neither write
 * is lost. Only the domain's own item is read and written, whatever the size of the account.
 */
export class StateActionStore implements ActionStore {
  readonly location: string;
  /** The binding already checked against the key (scrypt costs some 50 ms). */
  private checked: string | undefined;

  constructor(
    private readonly store: StateStore,
    /** The account the state belongs to (the reseller base URL), as the scan checks it. */
    private readonly scope: string,
    private readonly options: StateActionStoreOptions = {},
  ) {
    this.location = store.location;
  }

  snooze(domain: string, snooze: Snooze): Promise<void> {
    return this.change((actions) => ({ ...actions, snooze }), domain);
  }

  acknowledge(domain: string, acknowledged: Acknowledgement): Promise<void> {
    return this.change((actions) => ({ ...actions, acknowledged }), domain);
  }

  /** The domain's memory as the last scan saved it, under any spelling of its name. */
  async memoryOf(domain: string): Promise<DomainMemory | undefined> {
    const opened = await this.store.open(this.scope);
    await this.checkAccount(opened.head);
    return this.store.readDomain(opened, domainKey(domain));
  }

  private change(update: (actions: DomainActions) => DomainActions, domain: string): Promise<void> {
    return this.store.updateDomain(this.scope, domainKey(domain), (memory) => withActions(memory, update), {
      owner: `web-${randomBytes(6).toString('hex')}`,
      clock: Date.now,
      ...(this.options.retry ?? { attempts: ATTEMPTS, backoffMs: BACKOFF_MS }),
      check: (head) => this.checkAccount(head),
    });
  }

  /** Refuses a state bound to another account than the key's; an unbound one is left for a scan to bind. */
  private async checkAccount(head: Pick<StateHead, 'account' | 'scope'>): Promise<void> {
    const { apiKey, rebind } = this.options;
    if (!apiKey || head.account === null || head.account.hash === this.checked) return;
    await accountFor(head, await apiKey(), this.store.location, rebind);
    this.checked = head.account.hash;
  }
}

/**
 * One domain's memory with its actions changed. A domain with no memory yet (scanned without state
 * so far) gets one that holds only the actions, which the next scan fills in.
 */
function withActions(
  memory: DomainMemory | undefined,
  update: (actions: DomainActions) => DomainActions,
): DomainMemory {
  const current: DomainMemory = memory ?? { watched: {}, finding: null, alerted: null };
  const actions = update(current.actions ?? {});
  const { actions: _old, ...rest } = current;
  return actions.snooze || actions.acknowledged ? { ...rest, actions } : rest;
}
