import {
  type AttributeValue,
  BatchWriteItemCommand,
  type DynamoDBClient,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { recordAuditItem } from '../../functions/aws/dynamodb-restore-records';
import { AUDIT_MAX_ENTRIES, type AuditEntry } from '../../functions/core/memory/audit';

/**
 * Found by a hostile review of AWS limits: the audit trail's trim deleted the attempts past its
 * bound with BatchWriteItem and never looked at UnprocessedItems. DynamoDB answers a throttled
 * batch with its deletes there, not with an error (dynalite never does), so the trail silently
 * kept attempts past its bound. The unprocessed deletes are now sent again.
 */
describe('the audit trail trim on DynamoDB', () => {
  const entry: AuditEntry = {
    action: 'restore',
    at: '2026-11-22T06:00:00.000Z',
    domain: 'shop.nl',
    outcome: 'restored',
    status: 200,
    via: 'web',
    key_id: 'k1',
    client_ip: null,
    user_agent: null,
    sent: true,
    link_expires: null,
    repeats: 0,
  };
  const key = (n: number): Record<string, AttributeValue> => ({
    pk: { S: 'https://api.example' },
    sk: { S: `audit#seq#${String(n).padStart(16, '0')}` },
  });

  it('sends again the deletes DynamoDB left unprocessed', async () => {
    const kept = Array.from({ length: AUDIT_MAX_ENTRIES + 30 }, (_, i) => key(AUDIT_MAX_ENTRIES + 30 - i));
    const batches: Array<Record<string, AttributeValue>[]> = [];
    let throttled = false;
    const client = {
      send: async (command: unknown) => {
        if (command instanceof UpdateItemCommand)
          return { Attributes: { n: { N: String(AUDIT_MAX_ENTRIES + 30) } } };
        if (command instanceof QueryCommand) return { Items: kept };
        if (command instanceof BatchWriteItemCommand) {
          const requests = Object.values(command.input.RequestItems ?? {})[0] ?? [];
          batches.push(requests.map((r) => r.DeleteRequest?.Key as Record<string, AttributeValue>));
          // The first batch: DynamoDB throttles its last five deletes.
          if (!throttled) {
            throttled = true;
            return { UnprocessedItems: { sentinel: requests.slice(-5) } };
          }
          return { UnprocessedItems: {} };
        }
        throw new Error(`unexpected ${String(command)}`);
      },
    } as unknown as DynamoDBClient;
    await recordAuditItem(
      { client, table: 'sentinel', scope: 'https://api.example', location: 'dynamodb:sentinel' },
      entry,
    );
    const deleted = batches.flat().map((k) => k.sk?.S);
    const beyond = kept.slice(AUDIT_MAX_ENTRIES).map((k) => k.sk?.S);
    // Every item past the bound deleted; the five throttled ones sent again, once more.
    expect(new Set(deleted)).toEqual(new Set(beyond));
    expect(deleted).toHaveLength(beyond.length + 5);
  });
});
