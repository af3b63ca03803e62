import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { handleWebhookEvent } from '../../functions/handlers/webhook-subscriber';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ROOT } from '../../scripts/docs';
import { runCli } from '../support/cli';
import { domainFinding, reportOf } from '../support/report';

/**
 * The receiver docs/chat.md tells a JSON webhook's owner to write, run as written (read from the
 * page), behind a real HTTP server on 127.0.0.1, against real deliveries (`scan --webhook` and the
 * subscriber Lambda's handler) and replays of a captured one: the same delivery again, and the same
 * delivery under a new X-Sentinel-Delivery id, which an unsigned id would let through as a new alert.
 */

const NOW = '2026-11-22T06:00:00Z';
const API_KEY = 'sk_receiver_5e4d3c2b1a0f9e8d7c6b';
const SIGNING = 'receiver-test-signing-key-0123456789abcdef';

type Verdict = 'new' | 'repeat' | 'refused';
type Receive = (headers: IncomingHttpHeaders, rawBody: string, key: string) => Verdict;

interface Delivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** The first `js` block of the page's signed JSON webhook section, as a module exporting `receive`. */
async function documentedReceiver(dir: string): Promise<Receive> {
  const page = await readFile(join(ROOT, 'docs/chat.md'), 'utf8');
  const section = page.slice(page.indexOf('### The signed JSON webhook'));
  const block = /```js\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (!block) throw new Error('docs/chat.md: no js block in "The signed JSON webhook"');
  const file = join(dir, 'receiver.mjs');
  await writeFile(file, `${block}\nexport { receive };\n`);
  return ((await import(pathToFileURL(file).href)) as { receive: Receive }).receive;
}

let dir: string;
let sim: Simulator;
let server: Server;
let url: string;
let receive: Receive;
/** Every delivery the receiver got, with what the documented code made of it. */
const arrived: Array<Delivery & { verdict: Verdict }> = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-receiver-'));
  receive = await documentedReceiver(dir);
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 60, seed: 5, now: Date.parse(NOW) }),
    apiKey: API_KEY,
  });
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verdict = receive(req.headers, body, SIGNING);
      arrived.push({ headers: req.headers, body, verdict });
      res.writeHead(verdict === 'refused' ? 401 : 200).end(verdict);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await sim?.close();
  await new Promise<void>((r) => server?.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  arrived.length = 0;
});

/** Sends a captured delivery again, as whoever captured it would (any header changed as given). */
async function replay(delivery: Delivery, changes: Record<string, string | undefined> = {}) {
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'user-agent', 'x-sentinel-delivery', 'x-sentinel-signature'])
    if (typeof delivery.headers[name] === 'string') headers[name] = delivery.headers[name];
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const res = await fetch(url, { method: 'POST', headers, body: delivery.body });
  return { status: res.status, verdict: await res.text() };
}

describe('the receiver docs/chat.md documents, against replays of a captured delivery', () => {
  it('takes a delivery of `scan --webhook` once, and refuses it replayed under a new delivery id', async () => {
    const run = await runCli(['scan', '--webhook', url, '--webhook-format', 'json', '--now', NOW], {
      RESELLER_BASE_URL: sim.url,
      RESELLER_API_KEY: API_KEY,
      WEBHOOK_SIGNING_KEY: SIGNING,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(arrived.map((a) => a.verdict)).toEqual(['new']);
    const captured = arrived[0] as Delivery;

    // The same delivery again (a retry, or a replay within the 5 minutes): acknowledged, not acted on.
    expect(await replay(captured)).toEqual({ status: 200, verdict: 'repeat' });
    // Under a new id, it would be a second alert to a receiver that trusts the id: the signature covers it.
    expect(await replay(captured, { 'x-sentinel-delivery': randomUUID() })).toEqual({
      status: 401,
      verdict: 'refused',
    });
    expect(await replay(captured, { 'x-sentinel-delivery': undefined })).toEqual({
      status: 401,
      verdict: 'refused',
    });
    expect(arrived.filter((a) => a.verdict === 'new')).toHaveLength(1);
  });

  it('refuses a captured delivery of the subscriber Lambda under a new id, and with a changed body', async () => {
    const report = reportOf([domainFinding('lost.nl', 'quarantine', 'critical', -20)]);
    const message = JSON.parse(buildAlertMessage(report).message) as { default: string };
    const queue = 'arn:aws:sqs:eu-west-1:123456789012:webhook-json';
    const event: SQSEvent = {
      Records: [
        {
          messageId: randomUUID(),
          receiptHandle: 'r',
          body: JSON.stringify({ Type: 'Notification', MessageId: randomUUID(), Message: message.default }),
          attributes: {} as never,
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: queue,
          awsRegion: 'eu-west-1',
        },
      ],
    };
    const deps = {
      env: {
        WEBHOOK_TARGETS: JSON.stringify([{ format: 'json', parameter: '/hooks/json', queue }]),
        WEBHOOK_SIGNING_KEY_PARAMETER: '/hooks/signing-key',
      },
      secrets: async (name: string) => (name === '/hooks/json' ? url : SIGNING),
      logger: { info: () => {}, error: () => {} },
      metrics: { addMetric: () => {}, publishStoredMetrics: () => {} },
    };

    expect(await handleWebhookEvent(event, deps as never, 30_000)).toEqual({ batchItemFailures: [] });
    // The queue redelivers the same alert: the same id, signed anew; the receiver acts once.
    expect(await handleWebhookEvent(event, deps as never, 30_000)).toEqual({ batchItemFailures: [] });
    expect(arrived.map((a) => a.verdict)).toEqual(['new', 'repeat']);
    const captured = arrived[0] as Delivery;

    expect((await replay(captured, { 'x-sentinel-delivery': randomUUID() })).verdict).toBe('refused');
    const changed = { ...captured, body: captured.body.replace('lost.nl', 'lust.nl') };
    expect(changed.body).not.toBe(captured.body);
    expect((await replay(changed)).verdict).toBe('refused');
  });
});
