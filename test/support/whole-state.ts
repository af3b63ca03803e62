import { type CompareResult, compareMemory } from '../../functions/core/memory/compare';
import { ScanMemory } from '../../functions/core/memory/scan-memory';
import {
  type AccountBinding,
  type DomainMemory,
  EMPTY_HEAD,
  encodeMemory,
  readContactMemory,
  readDomainMemory,
  type StateHead,
  type StatePolicy,
  type WatchedFields,
} from '../../functions/core/memory/state';
import { readStateHead } from '../../functions/core/memory/state-header';
import { DEFAULT_REPEAT } from '../../functions/core/scan/policies';
import type { Report } from '../../functions/core/scan/scan';
import type { StateStore } from '../../functions/use-cases/state-store';

/**
 * The state held whole as objects, for tests: the comparison of a scan with a state written as one
 * object, and a store's state loaded and saved whole. The product never holds a state so (a scan
 * streams its domains into a ScanMemory); these build on the same protocol and comparison.
 */

/** Everything remembered about one account, its domains as one record by key. */
export interface ScanState extends StateHead {
  readonly domains: Readonly<Record<string, DomainMemory>>;
}

/** The policy of a deployment that sets nothing (the settings' defaults). */
export const DEFAULT_STATE_POLICY: StatePolicy = {
  thresholds: [30, 14, 7, 3, 1],
  repeat: DEFAULT_REPEAT,
  summaryEveryDays: 7,
  minSeverity: 'warning',
};

/** The state before the first scan. */
export const EMPTY_STATE: ScanState = { ...EMPTY_HEAD, domains: {} };

export interface WholeCompareInput {
  readonly report: Report;
  /** The watched fields of every domain read in this scan, by name as read. */
  readonly observed: ReadonlyMap<string, WatchedFields>;
  readonly state: ScanState;
  readonly policy: StatePolicy;
  readonly scope?: string;
  readonly account?: AccountBinding;
  /** The page each domain (by name as read) was read on. */
  readonly pages?: ReadonlyMap<string, number>;
}

/** A comparison's result with the next state whole. */
export type WholeCompareResult = Omit<CompareResult, 'next'> & { readonly next: ScanState };

/** The comparison of a scan with a state held whole; `next` whole too. */
export function compareWithState(input: WholeCompareInput): WholeCompareResult {
  const { state, observed, pages } = input;
  const memory = new ScanMemory();
  for (const [key, value] of Object.entries(state.domains)) memory.remember(key, value);
  for (const [name, watched] of observed) memory.observeWatched(name, watched, pages?.get(name) ?? 0);
  const { domains: _domains, ...head } = state;
  const result = compareMemory({
    report: input.report,
    memory,
    head,
    policy: input.policy,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    ...(input.account !== undefined ? { account: input.account } : {}),
  });
  return { ...result, next: { ...result.next.head, domains: Object.fromEntries(result.next.domains) } };
}

/** A state as a store holds it: the state whole, its generation and lease. */
export interface LoadedState {
  readonly state: ScanState;
  readonly generation: number;
  readonly lease: { readonly owner: string; readonly expiresAt: number } | null;
}

/** The state each LoadedState was opened as, for the save that follows it. */
const openedOf = new WeakMap<LoadedState, Awaited<ReturnType<StateStore['open']>>>();

/** The whole state of `store` (its domains as objects), opened for `scope`. */
export async function loadState(store: StateStore, scope = 'http://reseller.test'): Promise<LoadedState> {
  const opened = await store.open(scope);
  const memory = new ScanMemory();
  await store.read(opened, memory);
  const loaded: LoadedState = {
    state: { ...opened.head, domains: Object.fromEntries(memory.prior) },
    generation: opened.generation,
    lease: opened.lease,
  };
  openedOf.set(loaded, opened);
  return loaded;
}

/**
 * Writes `state` whole as the next generation of `loaded` (the lease `owner` holds), as a scan's
 * save would: every domain's memory, the changed ones marked.
 */
export async function saveState(store: StateStore, state: ScanState, loaded: LoadedState, owner: string) {
  const opened = openedOf.get(loaded);
  if (!opened) throw new Error('saveState takes a state loadState loaded');
  const { domains, ...head } = state;
  const all = new Map<string, DomainMemory>();
  const changed = new Map<string, DomainMemory | null>();
  for (const [key, value] of Object.entries(domains)) {
    const memory = readDomainMemory(value, key, 'the test');
    all.set(key, memory);
    const was = loaded.state.domains[key];
    if (!was || encodeMemory(was) !== encodeMemory(memory)) changed.set(key, memory);
  }
  for (const key of Object.keys(loaded.state.domains)) if (!all.has(key)) changed.set(key, null);
  await store.save(opened, owner, { head: readStateHead(head, head.contacts, 'the test'), changed, all });
}

/**
 * Reads a whole state as a store would (the head, each contact and each domain checked), or throws
 * the store's StateError naming the place and the reason.
 */
export function parseState(value: unknown, where: string): ScanState {
  const record = (value ?? {}) as Record<string, unknown>;
  const { domains = {}, contacts = {}, ...header } = record;
  const checkedContacts = Object.fromEntries(
    Object.entries(contacts as Record<string, unknown>).map(([key, memory]) => [
      key,
      readContactMemory(memory, key, where),
    ]),
  );
  const head = readStateHead(header, checkedContacts, where);
  const checked = Object.entries(domains as Record<string, unknown>).map(
    ([key, memory]) => [key, readDomainMemory(memory, key, where)] as const,
  );
  return { ...head, domains: Object.fromEntries(checked) };
}
