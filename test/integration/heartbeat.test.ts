import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { InterruptedError } from '../../bin/interrupt';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { captureOutput } from '../support/capture';
import { runCli } from '../support/cli';

/**
 * The heartbeat outside AWS: a real HTTP receiver on 127.0.0.1 gets one GET per complete scan and
 * one GET of /fail per failed one, from the command line and from the scan Lambda's handler; a
 * ping that fails changes nothing else and never shows the URL's secret part.
 */

const KEY = 'sk_heartbeat_test_5d2e';
/** The secret part of the heartbeat URL, as Healthchecks.io gives one: it must never be printed. */
const SECRET = '0f6b7c1e-5d2a-4f3e-9b8d-7a6c5e4f3d2c';

let sim: Simulator;
let receiver: Server;
let received: string[] = [];
let answer = 200;
/** Where the receiver redirects its pings to, when set. */
let redirectTo: string | undefined;
let pingBase: string;

beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 40, seed: 2, now: Date.now() }),
    apiKey: KEY,
  });
  receiver = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    if (redirectTo && !req.url?.endsWith('/moved')) res.writeHead(302, { location: redirectTo }).end();
    else res.writeHead(answer).end('OK');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  pingBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/${SECRET}`;
});
afterAll(async () => {
  await sim.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});
beforeEach(() => {
  received = [];
  answer = 200;
  redirectTo = undefined;
});

const cliEnv = (extra: NodeJS.ProcessEnv = {}) => ({
  RESELLER_BASE_URL: sim.url,
  RESELLER_API_KEY: KEY,
  HEARTBEAT_URL: pingBase,
  ...extra,
});

describe('the heartbeat of the command line', () => {
  it('pings the URL once after a complete scan, and not at all on a dry run', async () => {
    const run = await runCli(['scan', '--alert-to', 'stdout'], cliEnv());
    expect(run.code).toBe(0);
    expect(received).toEqual([`GET /${SECRET}`]);

    received = [];
    const dry = await runCli(['scan', '--dry-run'], cliEnv());
    expect(dry.code).toBe(0);
    expect(received).toEqual([]);
  });

  it('pings URL/fail once after a failed scan, and the scan’s own error and exit status stand', async () => {
    const run = await runCli(
      ['scan', '--alert-to', 'stdout'],
      cliEnv({ RESELLER_API_KEY: 'sk_wrong_key_0000' }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^sentinel: the reseller API refused the API key \(HTTP 401\)/);
    expect(received).toEqual([`GET /${SECRET}/fail`]);
  });

  // Found by a hostile run: a Ctrl-C made the scan start a new request, URL/fail, telling the
  // monitor the scan failed when a person stopped it, and the shell waited on it until its grace.
  it('pings nothing when a signal stops the scan: stopped is not failed, and no request starts after it', async () => {
    const hanging = await startSimulator({
      portfolio: generatePortfolio({ domains: 40, seed: 2, now: Date.now() }),
      apiKey: KEY,
    });
    hanging.injectFault({ fault: { kind: 'hang' }, times: 1_000 });
    try {
      const controller = new AbortController();
      const done = runCli(['scan', '--alert-to', 'stdout'], cliEnv({ RESELLER_BASE_URL: hanging.url }), {
        signal: controller.signal,
      });
      await vi.waitFor(() => expect(hanging.requests.length).toBeGreaterThan(0), { interval: 20 });
      controller.abort(InterruptedError.of('SIGINT'));
      expect(await done).toEqual({ code: 130, stdout: '', stderr: 'sentinel: interrupted by SIGINT\n' });
      expect(received).toEqual([]);
    } finally {
      await hanging.close();
    }
  });

  it('takes --heartbeat-url over HEARTBEAT_URL', async () => {
    const other = `${pingBase.replace(SECRET, 'flag-given')}`;
    await runCli(['scan', '--alert-to', 'stdout', '--heartbeat-url', other], cliEnv());
    expect(received).toEqual(['GET /flag-given']);
  });

  it('pings each account of an accounts file under its own name: URL/<account>, URL/<account>/fail', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sentinel-heartbeat-'));
    try {
      await writeFile(
        join(dir, 'accounts.json'),
        JSON.stringify({
          accounts: [
            { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
            { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY' },
          ],
        }),
      );
      const run = await runCli(
        ['scan', '--accounts', 'accounts.json', '--alert-to', 'stdout', '--account-concurrency', '1'],
        cliEnv({ BRAND_A_KEY: KEY, BRAND_B_KEY: 'sk_not_brand_b_0000' }),
        { cwd: dir },
      );
      expect(run.code).toBe(1);
      expect(received).toEqual([`GET /${SECRET}/brand-a`, `GET /${SECRET}/brand-b/fail`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says a ping that failed on stderr with the host only, and the scan still exits 0', async () => {
    answer = 503;
    const run = await runCli(['scan', '--alert-to', 'stdout'], cliEnv());
    expect(run.code).toBe(0);
    const host = new URL(pingBase).host;
    expect(run.stderr).toBe(
      `delivered the alert to stdout\nsentinel: the heartbeat ping to ${host} failed: it answered HTTP 503; the scan's own result stands\n`,
    );
    expect(run.stdout + run.stderr).not.toContain(SECRET);
  });

  it('says a receiver that is not there without the URL, and a failed scan still exits 1 with its own message', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const gone = `http://127.0.0.1:${port}/0f6b7c1e-gone-secret`;
    const run = await runCli(
      ['scan', '--alert-to', 'stdout'],
      cliEnv({ RESELLER_API_KEY: 'sk_wrong_key_0000', HEARTBEAT_URL: gone }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^sentinel: the heartbeat /fail ping to 127\\.0\\.0\\.1:${port} failed: the request failed \\(ECONNREFUSED\\); the scan's own result stands\n`,
      ),
    );
    expect(run.stderr).toMatch(/\nsentinel: the reseller API refused the API key/);
    expect(run.stdout + run.stderr).not.toContain('gone-secret');
  });

  it('says why fetch refused the ping when there is no socket error to name, still without the URL', async () => {
    // Port 9 (discard) is one browsers block: fetch refuses it before it connects, with no code.
    const run = await runCli(
      ['scan', '--alert-to', 'stdout'],
      cliEnv({
        RESELLER_API_KEY: 'sk_wrong_key_0000',
        HEARTBEAT_URL: 'http://127.0.0.1:9/0f6b7c1e-blocked-secret',
      }),
    );
    expect(run.stderr).toMatch(
      /^sentinel: the heartbeat \/fail ping to 127\.0\.0\.1:9 failed: the request failed \(bad port: fetch refuses port 9, a port browsers block\); the scan's own result stands\n/,
    );
    expect(run.stdout + run.stderr).not.toContain('blocked-secret');
  });

  it('follows no redirect to plain http of another host, where the URL would go in clear, and says so', async () => {
    // 127.0.0.2 is this machine too, but not a host the heartbeat's rule lets a URL reach over http.
    const elsewhere: string[] = [];
    const other = createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url}`);
      res.writeHead(200).end('OK');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.2', resolve));
    try {
      redirectTo = `http://127.0.0.2:${(other.address() as AddressInfo).port}/${SECRET}`;
      const run = await runCli(['scan', '--alert-to', 'stdout'], cliEnv());
      expect(run.code).toBe(0);
      expect(received).toEqual([`GET /${SECRET}`]);
      expect(elsewhere).toEqual([]);
      expect(run.stderr).toBe(
        `delivered the alert to stdout\nsentinel: the heartbeat ping to ${new URL(pingBase).host} failed: it answered HTTP 302, a redirect to a URL it may not use (https only, or http to this machine; nothing on this machine or a private network from a service outside it); the scan's own result stands\n`,
      );
      expect(run.stdout + run.stderr).not.toContain(SECRET);

      // A redirect the rule allows is followed.
      received = [];
      redirectTo = `/${SECRET}/moved`;
      const moved = await runCli(['scan', '--alert-to', 'stdout'], cliEnv());
      expect(moved.stderr).toBe('delivered the alert to stdout\n');
      expect(received).toEqual([`GET /${SECRET}`, `GET /${SECRET}/moved`]);
    } finally {
      other.closeAllConnections();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('refuses a heartbeat URL with a line break or a space inside, which URL parsing would drop or encode, without repeating it', async () => {
    // A parser of URLs drops a tab or line break inside one: the ping would go to another URL than the one given.
    for (const bad of [`${pingBase}\n-second-line`, `${pingBase}\t-x`, `${pingBase} -x`]) {
      const run = await runCli(['scan', '--alert-to', 'stdout'], cliEnv({ HEARTBEAT_URL: bad }));
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        'HEARTBEAT_URL must be one URL, without a space or line break inside (the value is not shown: it is a secret)',
      );
      expect(run.stderr).not.toContain(SECRET);
    }
    expect(received).toEqual([]);
    // Around it they are trimmed: a value pasted with its line break still pings.
    const trimmed = await runCli(
      ['scan', '--alert-to', 'stdout'],
      cliEnv({ HEARTBEAT_URL: ` ${pingBase}\n` }),
    );
    expect(trimmed.code).toBe(0);
    expect(received).toEqual([`GET /${SECRET}`]);
  });

  // Found by a hostile review: the refusal of a flag given twice named both values, so two
  // heartbeat (or webhook) URLs went to stderr and into whatever log keeps it.
  it('refuses --heartbeat-url or --webhook given twice without repeating either URL', async () => {
    for (const flag of ['--heartbeat-url', '--webhook']) {
      const run = await runCli(
        ['scan', '--dry-run', flag, `${pingBase}/a`, flag, `${pingBase}/b`],
        cliEnv({ HEARTBEAT_URL: '' }),
      );
      expect([run.code, run.stderr]).toEqual([
        2,
        `sentinel: ${flag} is given twice, with two values (not shown: a secret); give it once\n`,
      ]);
    }
    expect(received).toEqual([]);
  });

  it('refuses a heartbeat URL over http to another host without repeating it', async () => {
    const run = await runCli(['scan', '--dry-run'], cliEnv({ HEARTBEAT_URL: `http://hc.example/${SECRET}` }));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('HEARTBEAT_URL must be an https URL');
    expect(run.stderr).not.toContain(SECRET);
  });
});

describe('the heartbeat of the scan Lambda', () => {
  const ssm = mockClient(SSMClient);
  const sns = mockClient(SNSClient);
  const context = { getRemainingTimeInMillis: () => 120_000 } as unknown as Context;
  let output: () => string;

  beforeEach(() => {
    ssm.reset();
    sns.reset();
    vi.resetModules(); // a cold start: empty secret cache
    output = captureOutput();
    vi.stubEnv('RESELLER_BASE_URL', sim.url);
    vi.stubEnv('RESELLER_API_KEY_PARAMETER', '/domain-sentinel/api-key');
    vi.stubEnv('HEARTBEAT_URL_PARAMETER', '/domain-sentinel/heartbeat-url');
    vi.stubEnv('ALERT_TOPIC_ARN', 'arn:aws:sns:eu-west-1:123456789012:alerts');
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    ssm.on(GetParameterCommand, { Name: '/domain-sentinel/api-key' }).resolves({ Parameter: { Value: KEY } });
    ssm
      .on(GetParameterCommand, { Name: '/domain-sentinel/heartbeat-url' })
      .resolves({ Parameter: { Value: pingBase } });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('pings once after a complete scan, reading the URL from its SecureString', async () => {
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
    const { handler } = await import('../../functions/handlers/scan');
    await handler({}, context);
    expect(received).toEqual([`GET /${SECRET}`]);
    expect(ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input)).toContainEqual({
      Name: '/domain-sentinel/heartbeat-url',
      WithDecryption: true,
    });
  });

  it('pings /fail once when the publish fails, and the invocation still fails with the publish error', async () => {
    sns.on(PublishCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottledException' }));
    const { handler } = await import('../../functions/handlers/scan');
    await expect(handler({}, context)).rejects.toThrow(/could not publish the alert .*ThrottledException/);
    expect(received).toEqual([`GET /${SECRET}/fail`]);
  });

  it('logs a ping that failed without the URL, and the scan completes as before', async () => {
    answer = 500;
    sns.on(PublishCommand).resolves({ MessageId: 'm-2' });
    const { handler } = await import('../../functions/handlers/scan');
    const result = await handler({}, context);
    expect(result.published).toBe(true);
    expect(received).toEqual([`GET /${SECRET}`]);
    expect(output()).toContain('"message":"heartbeat failed"');
    expect(output()).toContain('it answered HTTP 500');
    expect(output()).toMatch(/"ScanCompleted":1/);
    expect(output()).not.toContain(SECRET);
  });
});
