import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  type UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { putRestoreClaim } from '../../functions/aws/dynamodb-restore-records';
import {
  type AuditTrail,
  CLAIM_CLOCK_SLACK_MS,
  MemoryRestoreClaims,
  RESTORE_CLAIM_MS,
} from '../../functions/core/memory/audit';
import { FileStateStore } from '../../functions/local/file-state-store';

/**
 * What a refused claim says: until when another's claim holds the domain, so the 409 page and
 * `sentinel restore` can say when to try again. A claim from a clock that ran ahead is named with
 * its own time only while it holds (at most {@link RESTORE_CLAIM_MS} plus the clocks' slack ahead).
 */

const NOW = Date.parse('2026-11-27T12:00:00Z');
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sentinel-claim-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const claimStores: Array<[string, () => Pick<AuditTrail, 'claimRestore'>]> = [
  ['in memory', () => new MemoryRestoreClaims()],
  ['in the state file', () => new FileStateStore(join(dir, 'state.json'))],
];

describe.each(claimStores)('a restore claim %s', (_name, store) => {
  it('answers a refused claim with the holder’s until, and a taken one with its own', async () => {
    const claims = store();
    const held = NOW + RESTORE_CLAIM_MS;
    expect(await claims.claimRestore('lost.com', { owner: 'web-1', until: held }, NOW)).toEqual({
      taken: true,
      until: held,
    });
    const later = NOW + 60_000;
    expect(
      await claims.claimRestore('lost.com', { owner: 'cli-1', until: later + RESTORE_CLAIM_MS }, later),
    ).toEqual({ taken: false, until: held });
  });

  it('names a claim from a clock ahead by its own until while it holds; one beyond the slack holds nothing', async () => {
    const claims = store();
    const ahead = NOW + RESTORE_CLAIM_MS + CLAIM_CLOCK_SLACK_MS; // the furthest a claim may hold
    await claims.claimRestore('lost.com', { owner: 'web-ahead', until: ahead }, ahead - RESTORE_CLAIM_MS);
    expect(await claims.claimRestore('lost.com', { owner: 'cli-1', until: NOW + 1 }, NOW)).toEqual({
      taken: false,
      until: ahead,
    });
    await claims.claimRestore(
      'other.com',
      { owner: 'web-far', until: ahead + 1 },
      ahead + 1 - RESTORE_CLAIM_MS,
    );
    expect((await claims.claimRestore('other.com', { owner: 'cli-2', until: NOW + 1 }, NOW)).taken).toBe(
      true,
    );
  });
});

describe('a restore claim in DynamoDB', () => {
  /** A client whose conditional update fails on `item` (as DynamoDB returns it with ALL_OLD), or none. */
  function refusing(item: Record<string, AttributeValue> | undefined) {
    const sent: UpdateItemCommand[] = [];
    const client = {
      send: async (command: UpdateItemCommand) => {
        sent.push(command);
        throw new ConditionalCheckFailedException({
          message: 'The conditional request failed',
          $metadata: {},
          ...(item ? { Item: item } : {}),
        });
      },
    } as unknown as DynamoDBClient;
    return { where: { client, table: 't', scope: 's', location: 'dynamodb:t' }, sent };
  }
  const claim = { owner: 'cli-1', until: NOW + RESTORE_CLAIM_MS };

  it('asks for the item the condition failed on, and answers with its until', async () => {
    const held = NOW + 9 * 60_000;
    const { where, sent } = refusing({ owner: { S: 'web-1' }, until: { N: String(held) } });
    expect(await putRestoreClaim(where, 'lost.com', claim, NOW)).toEqual({ taken: false, until: held });
    expect(sent[0]?.input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  });

  it.each([
    ['no item (an emulator that returns none)', undefined],
    ['an until that is no number', { owner: { S: 'web-1' }, until: { N: 'NaN' } }],
    [
      'an until beyond the longest claim (data, whatever the condition said)',
      { owner: { S: 'web-1' }, until: { N: String(NOW + 24 * 3_600_000) } },
    ],
  ] as const)('answers not taken, with no time, for %s', async (_name, item) => {
    const { where } = refusing(item);
    expect(await putRestoreClaim(where, 'lost.com', claim, NOW)).toEqual({ taken: false });
  });
});
