import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';

describe('a lease released after the run was stopped', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // The bound on a release after the stop (RELEASE_AFTER_STOP_MS) was a timer never cleared: it
  // outlived the release it bounded, and aborted a request long answered.
  it('leaves no timer behind once the release is answered', async () => {
    // Prepare: a table that answers the release at once, and a run already stopped.
    vi.useFakeTimers();
    const send = vi.fn(async () => ({}));
    const client = { send } as unknown as DynamoDBClient;
    const run = new AbortController();
    run.abort(new Error('stopped'));
    const store = new DynamoDbStateStore({
      client,
      tableName: 'state',
      scope: 'http://reseller.test',
      signal: run.signal,
    });

    // Act
    await store.release(1, 'scan');

    // Assess: the release was sent, and nothing waits to abort it.
    expect(send).toHaveBeenCalledOnce();
    expect(vi.getTimerCount()).toBe(0);
  });
});
