import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  UpdateContinuousBackupsCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { errorLine } from '../core/base/errors';
import { StateError } from '../core/memory/state';
import { STATE_TABLE_DEFINITION } from './state-table-definition';

const { partitionKey: PK, sortKey: SK } = STATE_TABLE_DEFINITION;

/** CreateTable input for the state table, from the one definition the stack also uses. */
export function createStateTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: PK.name, AttributeType: PK.type },
      { AttributeName: SK.name, AttributeType: SK.type },
    ],
    KeySchema: [
      { AttributeName: PK.name, KeyType: 'HASH' },
      { AttributeName: SK.name, KeyType: 'RANGE' },
    ],
    BillingMode: STATE_TABLE_DEFINITION.billingMode,
    // SSEType KMS without a key id: the AWS-managed key, as the stack's TableEncryption.AWS_MANAGED.
    SSESpecification: { Enabled: true, SSEType: 'KMS' },
  };
}

/**
 * Creates the state table (`state init`), waits until it is ACTIVE (a scan finds no CREATING table)
 * and turns on point-in-time recovery. Returns what could not be done (an emulator lacks backups).
 * `signal` (the command's stop) ends the requests and the wait: the table may then be CREATING,
 * and a `state init` again says it exists.
 */
export async function createStateTable(
  client: DynamoDBClient,
  tableName: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const abort = signal ? { abortSignal: signal } : undefined;
  try {
    await client.send(new CreateTableCommand(createStateTableInput(tableName)), abort);
    await waitUntilTableExists({ client, minDelay: 1, maxWaitTime: 300, ...abort }, { TableName: tableName });
  } catch (error) {
    signal?.throwIfAborted();
    throw new StateError(`could not create the DynamoDB table ${tableName}: ${errorLine(error)}`, {
      cause: error,
    });
  }
  try {
    await client.send(
      new UpdateContinuousBackupsCommand({
        TableName: tableName,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }),
      abort,
    );
    return [];
  } catch (error) {
    signal?.throwIfAborted();
    return [`point-in-time recovery not turned on: ${errorLine(error)}`];
  }
}
