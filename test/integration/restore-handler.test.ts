import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { parseSigningKeys, signRestoreLink } from '../../functions/core/links/links';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { captureOutput } from '../support/capture';
import { startDynalite } from '../support/dynalite';

const API_KEY = 'sk_restore_lambda_c0ffee42';
const SIGNING_KEY = 'lambda-signing-key-fedcba9876543210fedcba98';
const ssm = mockClient(SSMClient);
const portfolio = generatePortfolio({ domains: 200, seed: 4, now: Date.now(), profile: 'stress' });
const quarantined = portfolio.truth.findings.filter((f) => f.kind === 'quarantine').map((f) => f.key);
let sim: Simulator;
let output: () => string;

/**
 * The event API Gateway's REST API sends through a Lambda proxy integration for a request to
 * `link`; a POST carries the confirmation form filled in.
 */
function restEvent(method: string, link: string, headers: Record<string, string> = {}): APIGatewayProxyEvent {
  const url = new URL(link);
  const domain = url.pathname.split('/').pop() as string;
  const form = method === 'POST' ? `confirm_domain=${domain}&registrant_consent=yes` : null;
  return {
    resource: '/restore/{domain}',
    path: `/restore/${domain}`,
    httpMethod: method,
    headers: {
      Host: 'abc123.execute-api.eu-west-1.amazonaws.com',
      'User-Agent': 'Mozilla/5.0',
      ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      ...headers,
    },
    multiValueHeaders: {},
    queryStringParameters: Object.fromEntries(url.searchParams),
    multiValueQueryStringParameters: null,
    pathParameters: { domain },
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      stage: 'prod',
      path: `/prod/restore/${domain}`,
      httpMethod: method,
      requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      identity: { sourceIp: '198.51.100.7', userAgent: 'Mozilla/5.0' },
    } as APIGatewayProxyEvent['requestContext'],
    // API Gateway hands a form body over base64-encoded unless the API lists it as text.
    body: form === null ? null : Buffer.from(form).toString('base64'),
    isBase64Encoded: form !== null,
  };
}

/** A state table on `db` the web entry keeps its restores in, as the deployed stack's. */
async function stateTable(db: Awaited<ReturnType<typeof startDynalite>>): Promise<void> {
  await createStateTable(db.client(), 'web-state');
  for (const [name, value] of Object.entries({
    ...db.sdkEnv,
    STATE_TABLE_NAME: 'web-state',
    DEPLOYMENT_NAME: 'DomainSentinel',
  }))
    vi.stubEnv(name, value);
}

const link = (domain: string) =>
  signRestoreLink({
    baseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/',
    domain,
    keys: parseSigningKeys(SIGNING_KEY),
    now: Date.now(),
  });

beforeAll(async () => {
  sim = await startSimulator({ portfolio, apiKey: API_KEY });
});
afterAll(() => sim.close());
beforeEach(() => {
  vi.resetModules(); // a cold start: empty secret cache
  ssm.reset();
  output = captureOutput();
  vi.stubEnv('RESELLER_BASE_URL', sim.url);
  vi.stubEnv('RESELLER_API_KEY_PARAMETER', '/ds/api-key');
  vi.stubEnv('LINK_SIGNING_KEY_PARAMETER', '/ds/link-key');
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  ssm.on(GetParameterCommand, { Name: '/ds/api-key' }).resolves({ Parameter: { Value: API_KEY } });
  ssm.on(GetParameterCommand, { Name: '/ds/link-key' }).resolves({ Parameter: { Value: SIGNING_KEY } });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('restore Lambda entry point', () => {
  it('confirms on GET and restores on POST, reading both secrets from SSM with decryption', async () => {
    const { handler } = await import('../../functions/handlers/web');
    const domain = quarantined[0] as string;
    const get = await handler(restEvent('GET', link(domain)));
    expect(get.statusCode).toBe(200);
    expect(get.body).toContain('<form class="confirm" method="post"');
    expect(sim.domain(domain)?.status).toEqual(['quarantine']);
    const post = await handler(restEvent('POST', link(domain), { Accept: 'application/json' }));
    expect(post).toMatchObject({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
    });
    expect(JSON.parse(post.body)).toEqual({
      outcome: 'restored',
      message: `${domain} has been restored from quarantine.`,
    });
    expect(sim.domain(domain)?.status).toEqual(['registered']);

    const names = ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input);
    expect(names).toContainEqual({ Name: '/ds/link-key', WithDecryption: true });
    expect(names).toContainEqual({ Name: '/ds/api-key', WithDecryption: true });
    // Cached across the two invocations: each parameter read once.
    expect(names).toHaveLength(2);
  });

  it('shows a generic error page and logs the parameter name when a secret cannot be read', async () => {
    ssm
      .on(GetParameterCommand, { Name: '/ds/link-key' })
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const { handler } = await import('../../functions/handlers/web');
    const res = await handler(restEvent('GET', link(quarantined[1] as string)));
    expect(res.statusCode).toBe(500);
    expect(res.body).toContain('not configured correctly');
    expect(res.body).not.toContain('/ds/link-key');
    expect(output()).toMatch(
      /"detail":"could not read SSM parameter \/ds\/link-key \(AccessDeniedException\)"/,
    );
    expect(sim.restoreCalls).not.toContain(quarantined[1]);
  });

  it('logs each attempt as one structured line with caller IP and user agent, never a secret or the signature', async () => {
    const { handler } = await import('../../functions/handlers/web');
    const url = link(quarantined[2] as string);
    await handler(restEvent('HEAD', url));
    await handler(restEvent('GET', `${url.slice(0, -2)}xx`));
    const lines = output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const logs = lines.filter((l) => !l._aws);
    expect(logs.map((l) => [l.message, l.method, l.outcome, l.status, l.sourceIp])).toEqual([
      ['restore attempt', 'HEAD', 'head', 200, '198.51.100.7'],
      ['restore attempt', 'GET', 'bad_signature', 403, '198.51.100.7'],
    ]);
    // And one WebOutcome data point (CloudWatch EMF) per request, by route and outcome: the dashboard's web outcomes.
    const metrics = lines.filter((l) => l._aws);
    expect(metrics.map((l) => [l.service, l.action, l.outcome, l.WebOutcome])).toEqual([
      ['web', 'restore', 'head', 1],
      ['web', 'restore', 'bad_signature', 1],
    ]);
    const sig = new URL(url).searchParams.get('sig') as string;
    for (const secret of [API_KEY, SIGNING_KEY, sig]) expect(output()).not.toContain(secret);
  });

  it('keeps every restore POST in the state table’s audit trail, with the caller API Gateway saw', async () => {
    const db = await startDynalite();
    try {
      await createStateTable(db.client(), 'web-state');
      for (const [name, value] of Object.entries({ ...db.sdkEnv, STATE_TABLE_NAME: 'web-state' }))
        vi.stubEnv(name, value);
      const { handler } = await import('../../functions/handlers/web');
      const domain = quarantined[3] as string;
      const untyped = restEvent('POST', link(domain));
      untyped.body = null;
      untyped.isBase64Encoded = false;
      expect((await handler(untyped)).statusCode).toBe(422);
      expect((await handler(restEvent('POST', link(domain)))).statusCode).toBe(200);
      const trail = new DynamoDbStateStore({ client: db.client(), tableName: 'web-state', scope: sim.url });
      const entries = await trail.listAudit();
      expect(entries.map((e) => [e.domain, e.outcome, e.status, e.client_ip, e.user_agent, e.via])).toEqual([
        [domain, 'restored', 200, '198.51.100.7', 'Mozilla/5.0', 'web'],
        [domain, 'confirmation_missing', 422, '198.51.100.7', 'Mozilla/5.0', 'web'],
      ]);
      expect(entries[0]?.key_id).toBe(new URL(link(domain)).searchParams.get('kid'));
    } finally {
      await db.close();
    }
  });

  it('sends no restore when the audit trail cannot record it ahead, and says nothing was restored', async () => {
    const db = await startDynalite();
    try {
      await stateTable(db);
      // A counter item no ADD can take (a hand edit): the restore cannot be numbered ahead, so it is not sent.
      await db.client().send(
        new UpdateItemCommand({
          TableName: 'web-state',
          Key: { pk: { S: sim.url }, sk: { S: 'audit-counter' } },
          UpdateExpression: 'SET n = :x',
          ExpressionAttributeValues: { ':x': { S: 'x' } },
        }),
      );
      const { handler } = await import('../../functions/handlers/web');
      const domain = quarantined[4] as string;
      const res = await handler(restEvent('POST', link(domain), { Accept: 'application/json' }));
      expect(res.statusCode).toBe(503);
      expect(JSON.parse(res.body).outcome).toBe('audit_unavailable');
      // DynamoDB refuses the item for good (a ValidationException): no retry mends it, and the answer says so.
      expect(JSON.parse(res.body).message).toContain(
        'trying again will not help; the operator has been told',
      );
      expect(sim.restoreCalls).not.toContain(domain);
      expect(sim.domain(domain)?.status).toEqual(['quarantine']);
      const lines = output()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.find((l) => !l._aws && l.outcome === 'audit_unavailable')?.level).toBe('ERROR');
    } finally {
      await db.close();
    }
  });

  it('answers a restore whose outcome write fails as done, and emits the audit_failed data point the ops alarm watches', async () => {
    const db = await startDynalite();
    const domain = quarantined[5] as string;
    // The function's writes fail once the restore went out, as they do for one that stopped there.
    const send = DynamoDBClient.prototype.send;
    const stopped = vi.spyOn(DynamoDBClient.prototype, 'send').mockImplementation(function (
      this: DynamoDBClient,
      ...args: Parameters<DynamoDBClient['send']>
    ) {
      if (sim.restoreCalls.includes(domain)) return Promise.reject(new Error('the function stopped'));
      return send.apply(this, args);
    } as DynamoDBClient['send']);
    try {
      await stateTable(db);
      const { handler } = await import('../../functions/handlers/web');
      expect((await handler(restEvent('POST', link(domain)))).statusCode).toBe(200);
      expect(sim.domain(domain)?.status).toEqual(['registered']);
      const lines = output()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const point = lines.find((l) => l._aws && l.outcome === 'audit_failed');
      expect(point).toMatchObject({
        service: 'web',
        action: 'restore',
        deployment: 'DomainSentinel',
        WebOutcome: 1,
      });
      expect(point._aws.CloudWatchMetrics[0].Namespace).toBe('DomainSentinel');
      expect(lines.find((l) => !l._aws && l.outcome === 'audit_failed')?.level).toBe('ERROR');
      stopped.mockRestore();
      // The restore written ahead stays in the trail: sent, its outcome unknown.
      const trail = new DynamoDbStateStore({ client: db.client(), tableName: 'web-state', scope: sim.url });
      expect(await trail.listAudit()).toMatchObject([{ domain, outcome: 'restore_sending', sent: true }]);
    } finally {
      stopped.mockRestore();
      await db.close();
    }
  });
});
