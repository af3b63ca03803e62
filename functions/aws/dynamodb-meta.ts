import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { EMPTY_HEAD, StateError, type StateHead, stateIssue } from '../core/memory/state';
import { readStateHead, StateDamagedError } from '../core/memory/state-header';
import type { Lease } from '../use-cases/state-store';
import { BUCKETS, type ItemScope } from './dynamodb-buckets';
import { META_SORT_KEY } from './state-table-definition';

/**
 * The `#meta` item of an account's partition read back: its generation and lease (what the
 * protocol's conditional writes are made on), its account-wide part (`h`) and the bucket layout
 * (`layout`, the bucket count). A generation that is not a whole number is refused (a StateError):
 * every claim is conditional on it, so no scan may publish on it. An account-wide part or a layout
 * that does not read back is damage (StateDamagedError, with the generation): a scan alerts without
 * memory under the lease, and writes nothing else. A layout of another bucket count is another
 * release's, refused as a state of another format version is.
 */
export interface MetaRead {
  readonly head: StateHead;
  readonly generation: number;
  readonly lease: Lease | null;
}

/** What `meta` (undefined: none yet) holds; `contacts` as read apart. */
export function readMeta(
  at: ItemScope,
  meta: Record<string, AttributeValue> | undefined,
  contacts: StateHead['contacts'],
): MetaRead {
  const { generation: stored, h, layout, lease_owner: owner, lease_expires: expires } = meta ?? {};
  // Read as 0, a damaged generation would tell every scan "another scan moved the state on".
  if (stored !== undefined && !/^\d{1,15}$/.test(stored.N ?? ''))
    throw new StateError(
      `the state item ${META_SORT_KEY} in ${at.where} has no generation as a whole number; reset the state`,
    );
  const generation = Number(stored?.N ?? 0);
  const damaged = (damage: string) => ({ item: META_SORT_KEY, damage, generation });
  // Gone after a save, the account-wide part would open as empty: every memory taken for a first scan's.
  if ((h !== undefined || generation > 0) && h?.S === undefined)
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} has no account-wide part (h) as text; reset the state`,
      damaged('h: not text'),
    );
  // Every save writes it: gone after one, it is damage (and read as absent, no bucket would be read).
  if (layout === undefined && generation > 0)
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} has no bucket layout (layout) after a save; reset the state`,
      damaged('layout: missing'),
    );
  if (layout !== undefined && layout.N === undefined)
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} has no bucket layout (layout) as a number; reset the state`,
      damaged('layout: not a number'),
    );
  if (layout !== undefined && layout.N !== String(BUCKETS))
    throw stateIssue(
      at.where,
      `layout: written by another version of domain-sentinel (bucket layout ${layout.N}, this one reads ${BUCKETS})`,
    );
  const lease = owner?.S && expires?.N ? { owner: owner.S, expiresAt: Number(expires.N) } : null;
  if (h?.S === undefined) return { head: { ...EMPTY_HEAD, contacts }, generation, lease };
  let value: unknown;
  try {
    value = JSON.parse(h.S);
  } catch (error) {
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} is not JSON; reset the state`,
      damaged('h: not JSON'),
      { cause: error },
    );
  }
  return {
    head: readStateHead(value, contacts, at.where, { item: META_SORT_KEY, generation }),
    generation,
    lease,
  };
}
