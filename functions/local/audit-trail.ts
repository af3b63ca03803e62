import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbStateStore } from '../aws/dynamodb-state-store';
import type { AuditTrail } from '../core/memory/audit';
import type { StateLocation } from '../use-cases/stateful-scan';
import { FileStateStore } from './file-state-store';

/**
 * The audit trail of the state store a location names: the same file or table (and, in a table,
 * the same account partition) the scans keep their state in.
 */
export function openAuditTrail(
  location: StateLocation,
  scope: string,
  dynamodb: () => DynamoDBClient,
): AuditTrail {
  return location.kind === 'dynamodb'
    ? new DynamoDbStateStore({ client: dynamodb(), tableName: location.table, scope })
    : new FileStateStore(location.path);
}
