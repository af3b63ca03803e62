import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ReportStoreError } from '../../functions/core/memory/report-store';
import { createAccountsWebApp } from '../../functions/handlers/accounts-web';

/** The web surface of several accounts whose directory read fails with `error`, and what it logged. */
function failingDirectory(error: Error) {
  const logs: Array<{ message: string } & Record<string, unknown>> = [];
  const handler = createAccountsWebApp({
    directory: () => Promise.reject(error),
    appFor: () => {
      throw new Error('no account app is reached');
    },
    summaries: () => null,
    signingKeys: async () => [],
    fallback: async () => ({ statusCode: 404, body: '' }),
    log: (message, entry) => logs.push({ message, ...entry }),
  });
  const event = {
    resource: '/accounts/{account}/report',
    path: '/accounts/brand-a/report',
    httpMethod: 'GET',
    headers: {},
    pathParameters: { account: 'brand-a' },
    queryStringParameters: null,
  } as unknown as APIGatewayProxyEvent;
  return { answer: () => handler(event), logs };
}

describe('an account link when the deployment’s accounts cannot be read', () => {
  it('answers 503 try again when the read itself failed (S3 timed out), logged at error level', async () => {
    const cause = Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
    const { answer, logs } = failingDirectory(
      new ReportStoreError('could not read s3://b/accounts.json: TimeoutError', { cause }),
    );
    const res = await answer();
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('try again');
    expect(res.body).not.toContain('not configured correctly');
    expect(logs).toMatchObject([
      { message: 'account link', outcome: 'store_failed', status: 503, level: 'error' },
    ]);
  });

  it('answers 500 misconfigured when the read was refused (the role may not read it), logged at error level', async () => {
    const cause = Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $fault: 'client' });
    const { answer, logs } = failingDirectory(
      new ReportStoreError('could not read s3://b/accounts.json: AccessDenied', { cause }),
    );
    expect((await answer()).statusCode).toBe(500);
    expect(logs).toMatchObject([{ outcome: 'misconfigured', status: 500, level: 'error' }]);
  });

  it('answers 500 misconfigured when what was read is no directory, logged at error level', async () => {
    const { answer, logs } = failingDirectory(
      new ReportStoreError('s3://b/accounts.json is not JSON (Unexpected token); deploy the stack again'),
    );
    const res = await answer();
    expect(res.statusCode).toBe(500);
    expect(res.body).toContain('not configured correctly');
    expect(logs).toMatchObject([
      { message: 'account link', outcome: 'misconfigured', status: 500, level: 'error' },
    ]);
  });
});
