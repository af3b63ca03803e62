import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  QueryCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { errorLine } from '../core/base/errors';
import { backoffMs, sleep } from '../core/base/retry';
import {
  AUDIT_MAX_ENTRIES,
  AUDIT_MAX_REFUSALS,
  type AuditEntry,
  AuditEntrySchema,
  CLAIM_CLOCK_SLACK_MS,
  type ClaimAnswer,
  parseAuditEntry,
  RESTORE_CLAIM_MS,
  type RestoreClaim,
  refusalCountedOn,
  trimAudit,
} from '../core/memory/audit';
import { StateError } from '../core/memory/state';
import { STATE_TABLE_DEFINITION } from './state-table-definition';

const { partitionKey: PK, sortKey: SK } = STATE_TABLE_DEFINITION;

/**
 * Restore claims in the state table: one item per domain in the account's partition, sort key
 * `restore#<domain key>` (a name of at most 253 ASCII characters, or its hash: far inside the
 * 1 KB a sort key holds), with its owner and expiry. No scan reads or writes them. Written with
 * UpdateItem alone, the one conditional write the functions are granted (lib/state-table.ts).
 */
const CLAIM_PREFIX = 'restore#';

/** The account's part of the state table the restore records live in. */
export interface ClaimTable {
  readonly client: DynamoDBClient;
  readonly table: string;
  /** The account's partition key. */
  readonly scope: string;
  /** For messages: `dynamodb:TABLE`. */
  readonly location: string;
  /**
   * Ends a listing of the trail (`audit`) when the run is stopped. Never the writes: a restore
   * stopped while it waits keeps its attempt, written after the stop.
   */
  readonly signal?: AbortSignal;
}

const keyOf = (where: ClaimTable, domain: string): Record<string, AttributeValue> => ({
  [PK.name]: { S: where.scope },
  [SK.name]: { S: `${CLAIM_PREFIX}${domain}` },
});

/** Runs `fn`; any failure becomes a StateError saying what could not be done where. */
async function wrap<T>(where: ClaimTable, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new StateError(`could not ${what} in ${where.location}: ${errorLine(error)}`, { cause: error });
  }
}

/** Sends a conditional update: false when its condition did not hold (nothing written), true when written. */
async function updatedIf(where: ClaimTable, command: UpdateItemCommand): Promise<boolean> {
  try {
    await where.client.send(command);
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * One conditional write of the whole claim: written when no claim item exists, or the one there lapsed (or is further
 * ahead than any claim is taken for, beyond the clocks' slack: a clock that ran ahead; or has no numeric expiry), or is the same owner's. Not
 * taken when another's live claim holds the domain; nothing is written then, and the item the condition failed on
 * (ALL_OLD, the same read) says until when.
 */
export async function putRestoreClaim(
  where: ClaimTable,
  domain: string,
  claim: RestoreClaim,
  now: number,
): Promise<ClaimAnswer> {
  const far = now + RESTORE_CLAIM_MS + CLAIM_CLOCK_SLACK_MS;
  return wrap(where, `claim the restore of ${domain}`, async () => {
    try {
      await where.client.send(
        new UpdateItemCommand({
          TableName: where.table,
          Key: keyOf(where, domain),
          UpdateExpression: 'SET #owner = :owner, #until = :until',
          ConditionExpression:
            // An until that is no number (a hand edit) compares false with everything: it holds
            // nothing, as a claim the file store cannot read holds nothing, or it would hold for good.
            'attribute_not_exists(#until) OR NOT attribute_type(#until, :number) OR #until <= :now OR #until > :far OR #owner = :owner',
          ExpressionAttributeNames: { '#until': 'until', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':number': { S: 'N' },
            ':now': { N: String(now) },
            ':far': { N: String(far) },
            ':owner': { S: claim.owner },
            ':until': { N: String(claim.until) },
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { taken: true, until: claim.until };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // Held by the condition, the until is in (now, far]; checked again, as an item is data. An
      // emulator that returns no item (dynalite) leaves it unsaid.
      const until = Number(error.Item?.until?.N);
      return until > now && until <= far ? { taken: false, until } : { taken: false };
    }
  });
}

/** Ends `owner`'s claim on `domain` (lapsed at once; the next claim overwrites the item); nothing when it is another's. */
export async function endRestoreClaim(where: ClaimTable, domain: string, owner: string): Promise<void> {
  await wrap(where, `release the restore claim of ${domain}`, () =>
    updatedIf(
      where,
      new UpdateItemCommand({
        TableName: where.table,
        Key: keyOf(where, domain),
        UpdateExpression: 'SET #until = :lapsed',
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner', '#until': 'until' },
        ExpressionAttributeValues: { ':owner': { S: owner }, ':lapsed': { N: '0' } },
      }),
    ),
  );
}

/**
 * Restore attempts, in the account's partition: those that reached the reseller under
 * `audit#seq#<16 digits>`, the others under `audit#ref#<16 digits>`, each kind trimmed on its own
 * so a refusal never pushes out a paid attempt; both numbered in order of arrival by the counter
 * item `audit-counter` (attribute `n`), the entry in attribute `a`, refusals counted on an entry
 * in `r`. No scan reads or writes them.
 */
const SENT_PREFIX = 'audit#seq#';
const REFUSED_PREFIX = 'audit#ref#';
const AUDIT_COUNTER_SORT_KEY = 'audit-counter';

/** The items under `prefix`, newest first, read consistently. */
async function auditItems(where: ClaimTable, prefix: string, keysOnly = false, signal?: AbortSignal) {
  const items: Array<Record<string, AttributeValue>> = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await wrap(where, 'read the audit trail', () =>
      where.client.send(
        new QueryCommand({
          TableName: where.table,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK.name, '#sk': SK.name },
          ExpressionAttributeValues: { ':pk': { S: where.scope }, ':prefix': { S: prefix } },
          ...(keysOnly ? { ProjectionExpression: '#pk, #sk' } : {}),
          ScanIndexForward: false,
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
        signal ? { abortSignal: signal } : undefined,
      ),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** An item's entry as stored, with the refusals counted on it; null when it is not JSON. */
function storedEntry(item: Record<string, AttributeValue>): unknown {
  try {
    const value = JSON.parse(item.a?.S ?? '');
    const counted = Number(item.r?.N ?? 0);
    return typeof value === 'object' && value !== null && typeof value.repeats === 'number'
      ? { ...value, repeats: value.repeats + (Number.isSafeInteger(counted) ? counted : 0) }
      : value;
  } catch {
    return null; // not JSON: listed as an entry that could not be read
  }
}

/**
 * Adds a restore attempt: a refusal beyond its link's hourly share is counted on the last one kept
 * (an atomic ADD), anything else is numbered by an atomic counter (never by the time in the entry:
 * a clock that stepped back would sort it as the oldest and trim it at once), written, and the
 * oldest of its kind beyond its bound deleted.
 */
export async function recordAuditItem(where: ClaimTable, entry: AuditEntry): Promise<void> {
  const prefix = entry.sent ? SENT_PREFIX : REFUSED_PREFIX;
  if (!entry.sent) {
    const kept: Array<{ sk: string; entry: AuditEntry }> = [];
    for (const item of await auditItems(where, REFUSED_PREFIX)) {
      const parsed = AuditEntrySchema.safeParse(storedEntry(item));
      if (parsed.success) kept.push({ sk: item[SK.name]?.S ?? '', entry: parsed.data });
    }
    const on = refusalCountedOn(
      kept.map((k) => k.entry),
      entry,
    );
    const sk = on === null ? undefined : kept[on]?.sk;
    if (sk) {
      await wrap(where, 'count the restore attempt', () =>
        where.client.send(
          new UpdateItemCommand({
            TableName: where.table,
            Key: { [PK.name]: { S: where.scope }, [SK.name]: { S: sk } },
            UpdateExpression: 'ADD r :one',
            ExpressionAttributeValues: { ':one': { N: '1' } },
          }),
        ),
      );
      return;
    }
  }
  await putNumbered(where, prefix, entry);
  await trimAuditItems(where, prefix);
}

/**
 * Keeps a restore about to be sent: numbered and written as {@link recordAuditItem} writes an
 * attempt that reached the reseller (two round trips: the counter, the item), its trim left to
 * {@link completeAuditItem}, after the restore. Resolves with the item's sort key.
 */
export async function beginAuditItem(where: ClaimTable, entry: AuditEntry): Promise<string> {
  const sk = await numbered(where, SENT_PREFIX);
  try {
    await putAt(where, sk, entry);
  } catch (error) {
    // The item may have been written with only its answer lost. Nothing will be sent, and an entry
    // left saying "sent, outcome unknown" would name a restore that never went out to the next click.
    // (BatchWriteItem: the one delete the function's role is granted, lib/state-table.ts.)
    const Key = { [PK.name]: { S: where.scope }, [SK.name]: { S: sk } };
    await deleteBatch(where, [{ DeleteRequest: { Key } }]).catch(() => undefined);
    throw error;
  }
  return sk;
}

/**
 * Writes the outcome over the entry {@link beginAuditItem} kept at `ref` (one UpdateItem: the
 * attempt stays one item, in its place), then trims the attempts that reached the reseller.
 */
export async function completeAuditItem(where: ClaimTable, ref: string, entry: AuditEntry): Promise<void> {
  await putAt(where, ref, entry);
  await trimAuditItems(where, SENT_PREFIX);
}

/** Numbers `entry` by the atomic counter and writes it under `prefix`; resolves with its sort key. */
async function putNumbered(where: ClaimTable, prefix: string, entry: AuditEntry): Promise<string> {
  const sk = await numbered(where, prefix);
  await putAt(where, sk, entry);
  return sk;
}

/** The next sort key under `prefix`, by the atomic counter. */
async function numbered(where: ClaimTable, prefix: string): Promise<string> {
  const counted = await wrap(where, 'number the restore attempt', () =>
    where.client.send(
      new UpdateItemCommand({
        TableName: where.table,
        Key: { [PK.name]: { S: where.scope }, [SK.name]: { S: AUDIT_COUNTER_SORT_KEY } },
        UpdateExpression: 'ADD n :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
        ReturnValues: 'UPDATED_NEW',
      }),
    ),
  );
  const sequence = Number(counted.Attributes?.n?.N);
  if (!Number.isSafeInteger(sequence) || sequence < 1)
    throw new StateError(
      `could not number the restore attempt in ${where.location}: the counter ${AUDIT_COUNTER_SORT_KEY} holds ${JSON.stringify(counted.Attributes?.n?.N ?? null)}`,
    );
  return `${prefix}${String(sequence).padStart(16, '0')}`;
}

/** Writes `entry` as the item at sort key `sk`. */
async function putAt(where: ClaimTable, sk: string, entry: AuditEntry): Promise<void> {
  await wrap(where, 'keep the restore attempt', () =>
    where.client.send(
      new UpdateItemCommand({
        TableName: where.table,
        Key: { [PK.name]: { S: where.scope }, [SK.name]: { S: sk } },
        UpdateExpression: 'SET a = :a',
        ExpressionAttributeValues: { ':a': { S: JSON.stringify(entry) } },
      }),
    ),
  );
}

/** Deletes the oldest items under `prefix` beyond its bound. */
async function trimAuditItems(where: ClaimTable, prefix: string): Promise<void> {
  const old = (await auditItems(where, prefix, true)).slice(
    prefix === SENT_PREFIX ? AUDIT_MAX_ENTRIES : AUDIT_MAX_REFUSALS,
  );
  for (let start = 0; start < old.length; start += 25)
    await deleteBatch(
      where,
      old.slice(start, start + 25).map((Key) => ({ DeleteRequest: { Key } })),
    );
}

/** Tries again for the deletes a BatchWriteItem left unprocessed; what stays is the next trim's. */
const TRIM_UNPROCESSED_RETRIES = 3;

/**
 * One BatchWriteItem of a trim, its unprocessed deletes tried again after a short jittered wait:
 * DynamoDB answers a throttled batch with them in UnprocessedItems, not an error (an emulator never
 * does), and the trail then kept them past its bound.
 */
async function deleteBatch(where: ClaimTable, requests: WriteRequest[]): Promise<void> {
  let pending = requests;
  for (let attempt = 0; pending.length > 0 && attempt <= TRIM_UNPROCESSED_RETRIES; attempt++) {
    if (attempt > 0) await sleep(backoffMs(attempt, { minTimeout: 50, maxTimeout: 800, randomize: true }));
    const batch = pending;
    const out = await wrap(where, 'trim the audit trail', () =>
      where.client.send(new BatchWriteItemCommand({ RequestItems: { [where.table]: batch } })),
    );
    pending = out.UnprocessedItems?.[where.table] ?? [];
  }
}

/**
 * The restore attempts kept, newest first by arrival; an item that does not parse is listed as one
 * that could not be read (parseAuditEntry), counted as sent when it is kept with the attempts that
 * reached the reseller: it may be a restore written ahead, and maybe paid.
 */
export async function listAuditItems(where: ClaimTable): Promise<AuditEntry[]> {
  const [sent, refused] = await Promise.all([
    auditItems(where, SENT_PREFIX, false, where.signal),
    auditItems(where, REFUSED_PREFIX, false, where.signal),
  ]);
  const sequence = (item: Record<string, AttributeValue>) => Number((item[SK.name]?.S ?? '').slice(-16));
  const items = [...sent, ...refused].sort((a, b) => sequence(b) - sequence(a));
  return trimAudit(
    items.map((item) => parseAuditEntry(storedEntry(item), (item[SK.name]?.S ?? '').startsWith(SENT_PREFIX))),
  );
}
