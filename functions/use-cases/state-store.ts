import { retry } from '../core/base/retry';
import type { ScanMemory } from '../core/memory/scan-memory';
import {
  type AccountBinding,
  type ContactMemory,
  ContactMemorySchema,
  checked,
  type DomainMemory,
  DomainMemorySchema,
  StateConflictError,
  StateError,
  type StateHead,
  StateRefusedError,
} from '../core/memory/state';
import { belongsTo, bindAccount } from '../core/memory/state-account';
import { shownCut } from '../core/memory/state-bounds';
import type { StateDamagedError } from '../core/memory/state-header';

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

/** Where a store's read hands what it finds (StateStore.readMemories). */
export interface MemorySink {
  /**
   * One domain's memory as stored; false when it is not kept (a second memory of the key, or one
   * that cannot be read): the store writes that item again without it at the next save.
   */
  memory(key: string, value: unknown): boolean;
  /** An item of the store's own that holds memories but cannot be read (`item` names it): written again at the next save. */
  damaged(item: string, reason: string): void;
}

/**
 * The state as opened: everything but the domains, which {@link StateStore.read} streams into a
 * ScanMemory while the account is read. Small: the head, the flagged contacts.
 */
export interface OpenedState {
  readonly head: StateHead;
  /** 0 before the first save; each save adds one. */
  readonly generation: number;
  readonly lease: Lease | null;
  /**
   * The contacts' memories that could not be read (the item, and why): left out of `head`, and
   * problem records of the scan that reads this state (StateStore.read), which writes them again.
   */
  readonly damaged?: ReadonlyArray<readonly [item: string, reason: string]>;
}

/**
 * The flagged contacts as a store found them (`item` names each in a problem record; `found`, its
 * value or why it cannot be read), checked. Keys are data: the record has no prototype. One that
 * cannot be read is a problem record of the scan (OpenedState.damaged), whose save writes it again.
 */
export function readContacts(
  stored: Iterable<readonly [item: string, key: string, found: { value: unknown } | { damage: string }]>,
): Pick<OpenedState, 'damaged'> & { readonly contacts: StateHead['contacts'] } {
  const contacts: Record<string, ContactMemory> = Object.create(null);
  const damaged: Array<[string, string]> = [];
  for (const [item, key, found] of stored) {
    const read = 'damage' in found ? found : checked(ContactMemorySchema, found.value, ['contacts', key]);
    if ('damage' in read) damaged.push([item, read.damage]);
    else contacts[key] = read as ContactMemory;
  }
  return { contacts, ...(damaged.length ? { damaged } : {}) };
}

/** What one step of the protocol writes as the next generation. */
export interface StateWrite {
  readonly head: StateHead;
  /** The domains whose memory changed: the next one, or null for one forgotten. */
  readonly changed: ReadonlyMap<string, DomainMemory | null>;
  /** Every domain's next memory when a scan read them all; absent (a step), the rest and the contacts stay as stored, damaged or not. */
  readonly all?: ReadonlyMap<string, DomainMemory>;
  /**
   * Epoch ms after which a first save (nothing remembered yet, so nothing to lose) starts writing no
   * more domains and saves those written as the next generation: a first save too long for the time
   * left (a Lambda's timeout) keeps what fits, where being killed would keep none and the next scan
   * would announce every finding again, every run. Absent, or a state that remembers domains:
   * everything is written.
   */
  readonly saveBy?: number;
}

/** A first save that ran out of its time (StateWrite.saveBy): domains `kept` of `of`. */
export interface SavedInPart {
  readonly kept: number;
  readonly of: number;
}

/** How long a one-domain step holds the lease: a write takes milliseconds. */
const STEP_LEASE_MS = 15_000;

/**
 * Where scans remember each other: the protocol (open, read, claim, save or release) owned here
 * once, each store (a JSON file, DynamoDB) implementing six primitives, as Powertools'
 * BasePersistenceLayer is to its DynamoDB layer. Every write is conditional on the generation
 * opened: `claim` takes a lease on it before anything is published, `save` writes the next
 * generation and releases the lease, `release` gives it up unsaved (the publish failed). A write
 * that loses the race throws StateConflictError, and nothing of it is written.
 */
export abstract class StateStore<Known = unknown> {
  /** For messages: the file path or `dynamodb:TABLE`. */
  abstract readonly location: string;
  /** What the store learnt opening each state, for the reads and writes that follow. */
  private readonly known = new WeakMap<OpenedState, Known>();

  /**
   * The account-wide part of the state, its generation and lease (the empty state before the
   * first save), and what the store learnt reading it.
   */
  protected abstract readHead(): Promise<{ opened: OpenedState; known: Known }>;
  /**
   * Hands every remembered domain of `opened` to `sink` as stored. Stops early, without an error of
   * its own, when `signal` aborts (the scan it runs beside failed).
   */
  protected abstract readMemories(opened: OpenedState, sink: MemorySink, signal?: AbortSignal): Promise<void>;
  /** The memory of one domain's key in `opened` (undefined when it has none), reading no more than that domain's share: a link's page reads one domain, never all. */
  abstract readDomain(opened: OpenedState, key: string): Promise<DomainMemory | undefined>;
  /** Takes the lease on `generation` (the one opened); StateConflictError when another scan moved it on or holds it. */
  abstract claim(generation: number, lease: Lease): Promise<void>;
  /**
   * Writes `write` as generation + 1 and releases the lease, which `owner` must hold on `opened`;
   * StateConflictError (nothing written) when it does not.
   */
  abstract save(opened: OpenedState, owner: string, write: StateWrite): Promise<SavedInPart | undefined>;
  /** Gives the lease up without writing; nothing when it is no longer `owner`'s. */
  protected abstract dropLease(generation: number, owner: string): Promise<void>;
  /**
   * Runs `fn` (the publish of a scan whose state's account-wide part is damaged: `damaged`, from
   * this store's open) so that no other scan publishes at the same time, and writes nothing of the
   * state a person must look at: a table takes the lease on the generation stored beside the
   * damage (kept until it lapses once `fn` succeeded, so a retry of the run publishes nothing
   * again), a file holds its lock. StateConflictError when another scan holds the state.
   */
  abstract holdDamaged<T>(damaged: StateDamagedError, lease: Lease, fn: () => Promise<T>): Promise<T>;

  /** Opens the state and refuses one written for another reseller (base URL) than `scope`. */
  async open(scope: string): Promise<OpenedState> {
    const { opened, known } = await this.readHead();
    this.known.set(opened, known);
    if (opened.head.scope !== null && opened.head.scope !== scope)
      throw new StateRefusedError(
        `the state in ${this.location} belongs to ${shownCut(opened.head.scope)}, but this scan reads ${scope}; use another --state for each account`,
      );
    return opened;
  }

  /** What the store learnt opening `opened`; a state this store did not open is refused. */
  protected knownOf(opened: OpenedState): Known {
    const known = this.known.get(opened);
    if (!known) throw new StateError(`${this.location}: that state was not opened by this store`);
    return known;
  }

  /**
   * Adds every remembered domain of `opened` to `memory` as its prior memory. A stored memory that
   * cannot be read is a problem record of the scan, not the end of it: one damaged item must not
   * stop the alerts about every other domain (the store writes it again at the scan's save).
   */
  read(opened: OpenedState, memory: ScanMemory, signal?: AbortSignal): Promise<void> {
    const sink: MemorySink = {
      memory: (key, value) => {
        const read = checked(DomainMemorySchema, value, ['domains', key]);
        if (!('damage' in read)) return memory.remember(key, read as DomainMemory);
        memory.damaged(key, read.damage);
        return false;
      },
      damaged: (item, reason) => memory.damaged(item, reason),
    };
    for (const [item, reason] of opened.damaged ?? []) sink.damaged(item, reason);
    return this.readMemories(opened, sink, signal);
  }

  /** Gives the lease on `generation` up unsaved (never fails: a lease not given up lapses by itself). */
  async release(generation: number, owner: string): Promise<void> {
    await this.dropLease(generation, owner).catch(() => undefined);
  }

  /**
   * Runs `fn` holding `lease` on `generation`: claimed first (StateConflictError when another scan
   * moved the state on or holds it), given up unsaved when `fn` fails, so the next try can claim at once.
   */
  async leased<T>(generation: number, lease: Lease, fn: () => Promise<T>): Promise<T> {
    await this.claim(generation, lease);
    try {
      return await fn();
    } catch (error) {
      await this.release(generation, lease.owner);
      throw error;
    }
  }

  /** One conditional step of the protocol on `opened` (a snooze, a rebind): the lease for a moment, and the write `next` makes. */
  async step(
    opened: OpenedState,
    owner: string,
    now: number,
    next: () => Promise<StateWrite>,
  ): Promise<void> {
    const lease = { owner, expiresAt: now + STEP_LEASE_MS };
    await this.leased(opened.generation, lease, async () => this.save(opened, owner, await next()));
  }

  /**
   * One domain's memory changed alone (a snooze, an acknowledgement), as one conditional step:
   * open, claim, read that domain, write its next memory as the next generation. Tried again while
   * a scan holds the lease or saves first (`attempts` in all, waits doubling from `backoffMs`), so
   * a scan at the same moment either sees the change or re-reads the state and then sees it.
   * `check` sees the state opened first (the account it belongs to); `update` gets the domain's
   * memory (undefined when it has none) and returns the next one.
   */
  async updateDomain(
    scope: string,
    key: string,
    update: (memory: DomainMemory | undefined) => DomainMemory,
    options: {
      readonly owner: string;
      readonly clock: () => number;
      readonly attempts: number;
      readonly backoffMs: number;
      readonly check?: (head: StateHead) => Promise<void>;
    },
  ): Promise<void> {
    await retry(
      async () => {
        const opened = await this.open(scope);
        await options.check?.(opened.head);
        await this.step(opened, options.owner, options.clock(), async () => ({
          head: opened.head,
          changed: new Map([[key, update(await this.readDomain(opened, key))]]),
        }));
      },
      {
        retries: options.attempts - 1,
        minTimeout: options.backoffMs,
        shouldRetry: ({ error }) => error instanceof StateConflictError,
      },
    );
  }
}

/**
 * What names a state on the command line, for the refusal's `sentinel state rebind …`: the state
 * as `--state` names it and, for an account of an accounts file, the account and the file.
 */
export interface StateSelector {
  /** The path or `dynamodb:TABLE` as `--state` takes it (for an account of several, the shared one). */
  readonly state: string;
  /** An account of an accounts file: its name, and the file (as given, or a placeholder where unknown). */
  readonly account?: { readonly name: string; readonly accountsFile: string };
  /** The reseller base URL, when the command must be given it (`--base-url`). */
  readonly baseUrl?: string;
}

/** A word as a POSIX shell reads it back: bare when it is plain, else in single quotes. */
const shellWord = (word: string): string =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;

/** A path the command line reads as a path, not as an option: `-state.json` as `./-state.json`. */
const pathWord = (path: string): string => (path.startsWith('-') ? `./${path}` : path);

/** The exact `sentinel state reset|rebind …` for the state `selector` names. */
export function stateCommand(sub: 'reset' | 'rebind', selector: StateSelector): string {
  const words = ['sentinel', 'state', sub, pathWord(selector.state)];
  if (selector.account)
    words.push('--account', selector.account.name, '--accounts', pathWord(selector.account.accountsFile));
  if (selector.baseUrl) words.push('--base-url', selector.baseUrl);
  return [...words.map(shellWord), '--yes'].join(' ');
}

/**
 * The account binding to save with the next state: the state's own when `apiKey` is the key it was
 * bound with, a new one for a state not bound yet (a first scan). A state bound to another key is
 * refused: two accounts of one reseller share a base URL, and one's memory would announce the
 * other's domains as gone and drop its snoozes. The refusal names the exact command that rebinds
 * it (`selector`; without one, the location alone).
 */
export async function accountFor(
  head: Pick<StateHead, 'account' | 'scope'>,
  apiKey: string,
  location: string,
  selector?: StateSelector,
): Promise<AccountBinding> {
  if (head.account === null) return bindAccount(apiKey);
  if (await belongsTo(head.account, apiKey)) return head.account;
  // An account of an accounts file has a state of its own: only its own key can have been rotated.
  if (selector?.account)
    throw new StateRefusedError(
      `the state in ${location} (${head.scope ?? selector.account.name}) was bound to another API key than account ${selector.account.name}'s; if its key was rotated: ${stateCommand('rebind', selector)}`,
    );
  throw new StateRefusedError(
    `the state in ${location} belongs to another account of ${head.scope ?? 'this reseller'} (it was bound to another API key); use another --state for each account, or if this account's key was rotated: ${stateCommand('rebind', selector ?? { state: location })}`,
  );
}

/**
 * `sentinel state rebind`: binds the state to the account of `apiKey`, keeping all of its memory
 * (after a key rotation of the same account). One conditional step of the protocol, as a snooze
 * is. Returns false when the state already belonged to that key. A state never saved is refused:
 * binding it would write a state where there was none (a mistyped path, another account's scope).
 */
export async function rebindState(store: StateStore, scope: string, apiKey: string): Promise<boolean> {
  const owner = `rebind-${Math.random().toString(36).slice(2, 10)}`;
  const opened = await store.open(scope);
  if (opened.generation === 0)
    throw new StateRefusedError(
      `there is no state of ${scope} in ${store.location}: nothing to rebind, and nothing was written (check the path, --account and the reseller base URL)`,
    );
  if (opened.head.account && (await belongsTo(opened.head.account, apiKey))) return false;
  const account = await bindAccount(apiKey);
  // The account-wide part only: every domain's memory stays as it is.
  await store.step(opened, owner, Date.now(), async () => ({
    head: { ...opened.head, scope: opened.head.scope ?? scope, account },
    changed: new Map(),
  }));
  return true;
}
