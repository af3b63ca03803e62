import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../functions/core/alerts/webhook-formats';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { adaptiveCardProblems, CustomNotificationSchema, SlackMessageSchema } from '../support/chat-schemas';
import { runCli } from '../support/cli';
import { startSnsEmulator } from '../support/sns-emulator';

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'sk_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const SIGNING = 'cli-webhook-signing-key-0123456789abcdef';

let sim: Simulator;
let receiver: Server;
let base: string;
const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
let status = 200;

beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 300, seed: 3, now: Date.parse(NOW) }),
    apiKey: KEY,
  });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(status).end(status === 200 ? 'ok' : 'invalid_token');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await sim?.close();
  await new Promise<void>((r) => receiver?.close(() => r()));
});
afterEach(() => {
  received.length = 0;
  status = 200;
});

const env = () => ({ RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY });

describe('sentinel scan with CHAT_TOPIC_ARN', () => {
  it('publishes the alert, then the same alert as a custom notification on the chat topic (through fauxqs)', async () => {
    const emulator = await startSnsEmulator();
    try {
      const alerts = await emulator.topic('alerts');
      const chat = await emulator.topic('chat');
      const inbox = await emulator.queueSubscribedTo(chat, 'chat-inbox');
      const run = await runCli(
        ['scan', '--now', NOW],
        { ...env(), ALERT_TOPIC_ARN: alerts, CHAT_TOPIC_ARN: chat },
        { sns: emulator.snsClient },
      );
      expect(run.code, run.stderr).toBe(0);
      const [envelope, more] = await emulator.drain(inbox);
      expect(more).toBeUndefined();
      const message = CustomNotificationSchema.parse(JSON.parse(envelope?.Message ?? ''));
      expect(message.content.title).toMatch(/^domain-sentinel: \d+ critical/);
      expect(envelope?.MessageAttributes.severity?.Value).toBe('critical');
    } finally {
      await emulator.close();
    }
  });
});

describe('sentinel try-alerts --webhook-format', () => {
  it('runs the webhook path end to end: emulator, the subscriber handler, a receiver that prints the signed JSON', async () => {
    const run = await runCli(['try-alerts', '--webhook-format', 'json', '--now', NOW], {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('queue webhook-json: subscribed with the SNS envelope');
    expect(run.stdout).toMatch(
      /queue webhook-json: the webhook subscriber \(posted the alert to the webhook; 0 failed\)/,
    );
    expect(run.stdout).toMatch(/POST \/json \d+ bytes, X-Sentinel-Signature: t=\d+,v1=/);
  }, 60_000);
});

describe('sentinel scan --dry-run --chat', () => {
  it('prints only the custom-notification JSON the chat topic would get', async () => {
    const run = await runCli(['scan', '--dry-run', '--chat', '--now', NOW], {
      ...env(),
      ACCOUNT_LABEL: 'Acme',
    });
    expect(run.code, run.stderr).toBe(0);
    const message = CustomNotificationSchema.parse(JSON.parse(run.stdout));
    expect(message.content.title).toMatch(/^domain-sentinel \(Acme\): \d+ critical, \d+ warning/);
    expect(message.metadata?.threadId).toBe('domain-sentinel-acme-2026-11-22');
  });

  it('refuses --chat without --dry-run, and with --json', async () => {
    const alone = await runCli(['scan', '--chat', '--alert-to', 'stdout', '--now', NOW], env());
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--chat prints the chat message of a dry run: add --dry-run');
    const both = await runCli(['scan', '--dry-run', '--chat', '--json', '--now', NOW], env());
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--json and --chat would both write to stdout');
  });
});

describe('sentinel scan --webhook URL --webhook-format', () => {
  it('posts Slack blocks, a Teams card and the signed JSON to a local receiver', async () => {
    for (const format of ['slack', 'teams', 'json'] as const) {
      const run = await runCli(
        ['scan', '--webhook', `${base}/${format}/secret-path`, '--webhook-format', format, '--now', NOW],
        { ...env(), WEBHOOK_SIGNING_KEY: SIGNING },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`posted the alert to the ${format} webhook at 127.0.0.1:`);
      expect(run.stdout + run.stderr).not.toContain('secret-path');
    }
    const [slack, teams, json] = received;
    expect(SlackMessageSchema.safeParse(JSON.parse(slack?.body ?? '')).error).toBeUndefined();
    expect(adaptiveCardProblems(JSON.parse(teams?.body ?? '').attachments[0].content)).toEqual([]);
    const header = json?.headers['x-sentinel-signature'] as string;
    const deliveryId = json?.headers['x-sentinel-delivery'] as string;
    expect(deliveryId).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      verifyWebhookSignature({
        body: json?.body ?? '',
        deliveryId,
        header,
        key: SIGNING,
        nowSeconds: Math.floor(Date.now() / 1000),
      }),
    ).toBeNull();
  });

  it('takes WEBHOOK_URL and WEBHOOK_FORMAT from the environment', async () => {
    const run = await runCli(['scan', '--now', NOW], {
      ...env(),
      WEBHOOK_URL: `${base}/slack/from-env`,
      WEBHOOK_FORMAT: 'slack',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(received.map((r) => r.path)).toEqual(['/slack/from-env']);
  });

  it('fails (exit 1) naming the host and the answer, never the URL, when the webhook refuses', async () => {
    status = 403;
    const run = await runCli(
      ['scan', '--webhook', `${base}/slack/secret-path`, '--webhook-format', 'slack', '--now', NOW],
      env(),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /the slack webhook at 127\.0\.0\.1:\d+ answered HTTP 403 after 1 try \(invalid_token\); check the webhook URL and --webhook-format/,
    );
    expect(run.stderr).not.toContain('secret-path');
  });

  it('refuses a webhook without a format, a plain-http URL elsewhere, and --webhook with --dry-run', async () => {
    const noFormat = await runCli(
      ['scan', '--webhook', 'https://hooks.slack.com/services/T/B/x', '--now', NOW],
      env(),
    );
    expect(noFormat.code).toBe(2);
    expect(noFormat.stderr).toContain(
      '--webhook needs --webhook-format slack, teams or json (or WEBHOOK_FORMAT): the webhook at hooks.slack.com',
    );
    expect(noFormat.stderr).not.toContain('/T/B/x');
    const http = await runCli(
      ['scan', '--webhook', 'http://hooks.example.com/x', '--webhook-format', 'json', '--now', NOW],
      env(),
    );
    expect(http.code).toBe(2);
    expect(http.stderr).toContain('--webhook must be an https URL');
    const dry = await runCli(
      ['scan', '--dry-run', '--webhook', `${base}/x`, '--webhook-format', 'json'],
      env(),
    );
    expect(dry.code).toBe(2);
    const format = await runCli(['scan', '--webhook', `${base}/x`, '--webhook-format', 'discord'], env());
    expect(format.stderr).toContain('WEBHOOK_FORMAT (--webhook-format) must be one of slack, teams, json');
  });

  it('refuses --webhook-format without a webhook, which would post nothing and say nothing', async () => {
    const alone = await runCli(['scan', '--dry-run', '--webhook-format', 'slack', '--now', NOW], env());
    expect(alone).toMatchObject({ code: 2, stdout: '' });
    expect(alone.stderr).toBe(
      'sentinel: --webhook-format goes with --webhook URL (or WEBHOOK_URL): without a webhook nothing is posted\n',
    );
  });
});
