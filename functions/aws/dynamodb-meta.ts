import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { EMPTY_HEAD, StateError, type StateHead } from '../core/memory/state';
import { readStateHead, StateDamagedError } from '../core/memory/state-header';
import type { Lease } from '../use-cases/state-store';
import type { ItemScope } from './dynamodb-buckets';
import { META_SORT_KEY } from './state-table-definition';

/**
 * The `#meta` item of an account's partition read back: its generation and lease (what the
 * protocol's conditional writes are made on), its account-wide part (`h`) and the bucket layout.
 * A generation that is not a whole number is refused (a StateError): every claim is conditional
 * on it, so no scan may publish on it. An account-wide part or a layout that does not read back is
 * damage (StateDamagedError, with the generation): a scan alerts without memory under the lease,
 * and writes nothing else.
 */
export interface MetaRead {
  readonly head: StateHead;
  readonly generation: number;
  readonly lease: Lease | null;
  /** The bucket count's exponent; null before the first save. */
  readonly exponent: number | null;
}

/** What `meta` (undefined: none yet) holds; `contacts` as read apart. */
export function readMeta(
  at: ItemScope,
  meta: Record<string, AttributeValue> | undefined,
  contacts: StateHead['contacts'],
): MetaRead {
  // Read as 0, a damaged generation would tell every scan "another scan moved the state on".
  if (meta?.generation !== undefined && !/^\d{1,15}$/.test(meta.generation.N ?? ''))
    throw new StateError(
      `the state item ${META_SORT_KEY} in ${at.where} has no generation as a whole number; reset the state`,
    );
  const generation = meta?.generation?.N !== undefined ? Number(meta.generation.N) : 0;
  // Gone after a save, the account-wide part would open as empty: every memory taken for a first scan's.
  if ((meta?.h !== undefined || generation > 0) && meta?.h?.S === undefined)
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} has no account-wide part (h) as text; reset the state`,
      { item: META_SORT_KEY, damage: 'h: not text', generation },
    );
  // Read as absent, every bucket would be taken for garbage and its domains forgotten in silence.
  // Every save writes it (NULL until a domain's memory is first written): gone after one, it is damage.
  const layout = meta?.layout?.NULL === true ? undefined : meta?.layout;
  const exponent = layout !== undefined ? Number(layout.N) : null;
  if (meta?.layout === undefined && generation > 0)
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} has no bucket layout (layout) after a save; reset the state`,
      { item: META_SORT_KEY, damage: 'layout: missing', generation },
    );
  if (layout !== undefined && layout.N === undefined)
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} has no bucket layout (layout) as a number; reset the state`,
      { item: META_SORT_KEY, damage: 'layout: not a number', generation },
    );
  if (exponent !== null && !(Number.isInteger(exponent) && exponent >= 0 && exponent <= 28))
    throw new StateDamagedError(
      `the state in ${at.where} names a bucket layout it cannot have (${exponent}); reset the state`,
      { item: META_SORT_KEY, damage: `layout: ${exponent} is not a bucket layout`, generation },
    );
  const lease =
    meta?.lease_owner?.S && meta.lease_expires?.N
      ? { owner: meta.lease_owner.S, expiresAt: Number(meta.lease_expires.N) }
      : null;
  return { head: headOf(at, meta?.h?.S, contacts, generation), generation, lease, exponent };
}

function headOf(
  at: ItemScope,
  text: string | undefined,
  contacts: StateHead['contacts'],
  generation: number,
): StateHead {
  if (text === undefined) return { ...EMPTY_HEAD, contacts };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateDamagedError(
      `the state item ${META_SORT_KEY} in ${at.where} is not JSON; reset the state`,
      { item: META_SORT_KEY, damage: 'h: not JSON', generation },
      { cause: error },
    );
  }
  return readStateHead(value, contacts, at.where, { item: META_SORT_KEY, generation });
}
