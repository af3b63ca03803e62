import { createServer, request } from 'node:http';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import type { SdkTimeouts } from '../../functions/aws/sdk-timeouts';
import { parseSigningKeys, signLink, signRestoreLink } from '../../functions/core/links/links';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { captureOutput } from '../support/capture';
import { startDynalite } from '../support/dynalite';
import { listenOnLoopback } from '../support/loopback';

/*
 * The web entry's AWS clients give up on a call that never answers, so the person who clicked gets
 * the function's own page rather than API Gateway's bare 502 once Lambda kills it. The real SDK
 * client against a real server on loopback that takes the connection and never answers; small
 * timeouts given as the entry's configuration.
 */

const API_KEY = 'sk_web_timeouts_5a1e7c0ffee';
const SIGNING_KEY = 'web-timeouts-signing-key-0123456789abcdef';
const TIMEOUTS: SdkTimeouts = { connectionTimeoutMs: 200, requestTimeoutMs: 300, maxAttempts: 2 };
const ssm = mockClient(SSMClient);
const portfolio = generatePortfolio({ domains: 60, seed: 9, now: Date.now(), profile: 'stress' });
const quarantined = portfolio.truth.findings.filter((f) => f.kind === 'quarantine').map((f) => f.key);
let sim: Simulator;
let db: Awaited<ReturnType<typeof startDynalite>>;
let tables = 0;
const closers: Array<() => Promise<void>> = [];

/** A confirmed restore POST as API Gateway's proxy integration hands it over. */
function restorePost(domain: string): APIGatewayProxyEvent {
  const url = new URL(
    signRestoreLink({
      baseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/',
      domain,
      keys: parseSigningKeys(SIGNING_KEY),
      now: Date.now(),
    }),
  );
  return {
    resource: '/restore/{domain}',
    path: `/restore/${domain}`,
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'Mozilla/5.0' },
    multiValueHeaders: {},
    queryStringParameters: Object.fromEntries(url.searchParams),
    multiValueQueryStringParameters: null,
    pathParameters: { domain },
    stageVariables: null,
    requestContext: { identity: { sourceIp: '198.51.100.7' } } as APIGatewayProxyEvent['requestContext'],
    body: `confirm_domain=${domain}&registrant_consent=yes`,
    isBase64Encoded: false,
  };
}

/** An acknowledge POST of `finding`'s signed link, as API Gateway hands it over. */
function acknowledgePost(finding: (typeof portfolio.truth.findings)[number]): APIGatewayProxyEvent {
  const url = new URL(
    signLink({
      baseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/',
      action: 'acknowledge',
      subject: finding.key,
      finding: { kind: finding.kind, severity: finding.severity },
      keys: parseSigningKeys(SIGNING_KEY),
      now: Date.now(),
    }),
  );
  return {
    ...restorePost(finding.key),
    resource: '/acknowledge/{domain}',
    path: `/acknowledge/${finding.key}`,
    queryStringParameters: Object.fromEntries(url.searchParams),
    body: null,
  };
}

/**
 * A DynamoDB endpoint on loopback that passes each request to dynalite until `hang()` says so,
 * then takes the request and never answers; `hung` counts the requests left unanswered.
 */
async function hangingDynamoDb(hang: () => boolean) {
  const target = new URL(db.endpoint);
  const seen = { hung: 0 };
  const server = createServer((req, res) => {
    if (hang()) {
      seen.hung++;
      req.resume();
      return;
    }
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 500, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  const { url, close } = await listenOnLoopback(server);
  closers.push(close);
  return { url, seen };
}

/** The web entry with its state table behind `endpoint`. */
async function webEntry(endpoint: string) {
  const tableName = `web-timeouts-${++tables}`;
  await createStateTable(db.client(), tableName);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', endpoint);
  vi.stubEnv('STATE_TABLE_NAME', tableName);
  const { createWebEntry } = await import('../../functions/handlers/web');
  return { handler: createWebEntry(process.env, TIMEOUTS), tableName };
}

beforeAll(async () => {
  [sim, db] = await Promise.all([startSimulator({ portfolio, apiKey: API_KEY }), startDynalite()]);
});
afterAll(async () => {
  await Promise.all([sim.close(), db.close()]);
});
beforeEach(() => {
  ssm.reset();
  for (const [name, value] of Object.entries({
    ...db.sdkEnv,
    RESELLER_BASE_URL: sim.url,
    RESELLER_API_KEY_PARAMETER: '/ds/api-key',
    LINK_SIGNING_KEY_PARAMETER: '/ds/link-key',
  }))
    vi.stubEnv(name, value);
  ssm.on(GetParameterCommand, { Name: '/ds/api-key' }).resolves({ Parameter: { Value: API_KEY } });
  ssm.on(GetParameterCommand, { Name: '/ds/link-key' }).resolves({ Parameter: { Value: SIGNING_KEY } });
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('the web entry when DynamoDB does not answer', () => {
  it('answers a restore whose claim never returns with its own 503 page, after the configured attempts, sending nothing', async () => {
    const output = captureOutput();
    const dynamo = await hangingDynamoDb(() => true);
    const { handler } = await webEntry(dynamo.url);
    const domain = quarantined[0] as string;
    const res = await handler(restorePost(domain));
    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('<html');
    expect(output()).toContain('"outcome":"claim_unavailable"');
    // Each attempt was taken and left unanswered, then the call gave up after its attempts: the
    // claim, then the refused attempt's audit entry (its failure logged, the page unchanged).
    expect(dynamo.seen.hung).toBe(2 * TIMEOUTS.maxAttempts);
    expect(output()).toContain('"outcome":"audit_failed"');
    expect(sim.restoreCalls).not.toContain(domain);
  });

  it('answers a restore whose outcome write never returns as restored, the trail keeping it as sent', async () => {
    const output = captureOutput();
    const domain = quarantined[1] as string;
    const dynamo = await hangingDynamoDb(() => sim.restoreCalls.includes(domain));
    const { handler, tableName } = await webEntry(dynamo.url);
    const res = await handler(restorePost(domain));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('has been restored');
    expect(sim.domain(domain)?.status).toEqual(['registered']);
    expect(output()).toContain('"outcome":"audit_failed"');
    expect(dynamo.seen.hung).toBe(TIMEOUTS.maxAttempts);
    const trail = new DynamoDbStateStore({ client: db.client(), tableName, scope: sim.url });
    expect(await trail.listAudit()).toMatchObject([{ domain, outcome: 'restore_sending', sent: true }]);
  });

  it('answers an acknowledgement whose state never answers with its own 503 page', async () => {
    const output = captureOutput();
    const dynamo = await hangingDynamoDb(() => true);
    const { handler } = await webEntry(dynamo.url);
    const finding =
      portfolio.truth.findings.find((f) => f.kind === 'expiring') ?? portfolio.truth.findings[0];
    const res = await handler(acknowledgePost(finding as (typeof portfolio.truth.findings)[number]));
    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Content-Type']).toBe('text/html; charset=utf-8');
    expect(output()).toContain('"outcome":"store_failed"');
    // The finding's memory read, then the state opened for the write: each two queries at once,
    // each query its attempts and no more.
    expect(dynamo.seen.hung).toBe(2 * 2 * TIMEOUTS.maxAttempts);
  });
});
