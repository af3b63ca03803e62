import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { RESTORE_CLAIM_MS, type RestoreClaim } from '../core/memory/audit';
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

export interface ClaimTable {
  readonly client: DynamoDBClient;
  readonly table: string;
  /** The account's partition key. */
  readonly scope: string;
  /** For messages: `dynamodb:TABLE`. */
  readonly location: string;
}

const keyOf = (where: ClaimTable, domain: string): Record<string, AttributeValue> => ({
  [PK.name]: { S: where.scope },
  [SK.name]: { S: `${CLAIM_PREFIX}${domain}` },
});

const describe = (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`;

/**
 * One conditional write of the whole claim: written when no claim item exists, or the one there lapsed (or is further
 * ahead than any claim is taken for: a clock that ran ahead), or is the same owner's. False when
 * another's live claim holds the domain; nothing is written then.
 */
export async function putRestoreClaim(
  where: ClaimTable,
  domain: string,
  claim: RestoreClaim,
  now: number,
): Promise<boolean> {
  try {
    await where.client.send(
      new UpdateItemCommand({
        TableName: where.table,
        Key: keyOf(where, domain),
        UpdateExpression: 'SET #owner = :owner, #until = :until',
        ConditionExpression:
          'attribute_not_exists(#until) OR #until <= :now OR #until > :far OR #owner = :owner',
        ExpressionAttributeNames: { '#until': 'until', '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':now': { N: String(now) },
          ':far': { N: String(now + RESTORE_CLAIM_MS) },
          ':owner': { S: claim.owner },
          ':until': { N: String(claim.until) },
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw new StateError(
      `could not claim the restore of ${domain} in ${where.location}: ${describe(error)}`,
      {
        cause: error,
      },
    );
  }
}

/** Ends `owner`'s claim on `domain` (lapsed at once; the next claim overwrites the item); nothing when it is another's. */
export async function endRestoreClaim(where: ClaimTable, domain: string, owner: string): Promise<void> {
  try {
    await where.client.send(
      new UpdateItemCommand({
        TableName: where.table,
        Key: keyOf(where, domain),
        UpdateExpression: 'SET #until = :lapsed',
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner', '#until': 'until' },
        ExpressionAttributeValues: { ':owner': { S: owner }, ':lapsed': { N: '0' } },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return;
    throw new StateError(
      `could not release the restore claim of ${domain} in ${where.location}: ${describe(error)}`,
      {
        cause: error,
      },
    );
  }
}
