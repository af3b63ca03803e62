import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../bin/interrupt';
import { parseSigningKeys } from '../../functions/core/links/links';
import { generatePortfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { runCli, startCliServer } from '../support/cli';

/** The try-outs a new user follows never dead-end: each link leads somewhere, each printed line pastes. */

const NOW = '2026-11-22T06:00:00Z';
const KEY = 'try-outs-key-71c4e2';
const SIGNING_KEY = 'try-outs-signing-key-0123456789abcdef01';

let sim: Simulator;
let scratch: string;
beforeAll(async () => {
  sim = await startSimulator({
    portfolio: generatePortfolio({ domains: 60, seed: 7, now: Date.parse(NOW) }),
    apiKey: KEY,
  });
});
afterAll(() => sim.close());
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});
const freshDir = () => {
  scratch = mkdtempSync(join(tmpdir(), 'try-outs-'));
  return scratch;
};
const env = () => ({ RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: KEY });
const linesOf = (text: string, label: string) =>
  [...text.matchAll(new RegExp(`${label}: (http\\S+)`, 'g'))].map((m) => m[1] as string);

describe('npm start (demo) in a terminal', () => {
  it('keeps serving the links it printed until stopped, then stops serving them', async () => {
    const controller = new AbortController();
    let listening: (url: string) => void = () => {};
    const served = new Promise<string>((resolve) => {
      listening = resolve;
    });
    let stdout = '';
    const done = runCli(
      ['demo', '--now', NOW],
      {},
      {
        interactive: true,
        signal: controller.signal,
        onListening: listening,
        stdout: (t) => {
          stdout += t;
        },
      },
    );
    const url = await served;
    const [report] = linesOf(stdout, 'Full report');
    const acts = linesOf(stdout, 'Act');
    expect(report?.startsWith(`${url}/report?`), stdout).toBe(true);
    expect(acts.length).toBeGreaterThan(0);

    const page = await fetch(report as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('haven-6.com');
    // The first finding's one link opens its page, whose Restore link asks to confirm.
    const finding = await fetch(acts[0] as string);
    expect(finding.status).toBe(200);
    const restore = /<a href="([^"]+)" rel="noreferrer">Restore<\/a>/.exec(await finding.text())?.[1] ?? '';
    const confirm = await fetch(new URL(restore.replaceAll('&#38;', '&'), acts[0] as string));
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toMatch(/<form [^>]*method="post"/);

    // Ctrl-C, as a person stops it: exit 130, and the links are served no more.
    controller.abort(InterruptedError.of('SIGINT'));
    const stopped = await done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(/\nsentinel: interrupted by SIGINT\n$/);
    await expect(fetch(report as string)).rejects.toThrow();
  });
});

describe('serve finds what scan stored, under the same defaults', () => {
  it('shows the report of a scan run in the same directory without REPORT_DIR or a state', async () => {
    const cwd = freshDir();
    const linkEnv = { ...env(), LINK_SIGNING_KEY: SIGNING_KEY };
    const serve = await startCliServer(['serve', '--port', '0'], linkEnv, { cwd });
    try {
      const scan = await runCli(
        ['scan', '--json', '--dry-run', '--now', NOW],
        { ...linkEnv, LINK_BASE_URL: serve.url },
        { cwd },
      );
      expect(scan.code, scan.stderr).toBe(0);
      const { report_url } = JSON.parse(scan.stdout) as { report_url: string };
      expect(existsSync(join(cwd, '.sentinel', 'reports', 'latest.json'))).toBe(true);
      const page = await fetch(report_url);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).not.toContain('No report yet');
      expect(html).toContain('haven-6.com');
    } finally {
      await serve.stop();
    }
  });

  it('keeps no report in the directory when the scan prints no link to it', async () => {
    const cwd = freshDir();
    const scan = await runCli(['scan', '--dry-run', '--now', NOW], env(), { cwd });
    expect(scan.code).toBe(0);
    expect(existsSync(join(cwd, '.sentinel'))).toBe(false);
  });
});

describe('memory without SNS: scan --state PATH --alert-to stdout|FILE', () => {
  it('prints the message that would be published, saves the state, and a second run stays quiet', async () => {
    const state = join(freshDir(), 'state.json');
    const first = await runCli(['scan', '--state', state, '--alert-to', 'stdout', '--now', NOW], env());
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /^Subject: domain-sentinel: 7 critical, 4 warning, 7 info, 2 unreadable records\n\n/,
    );
    expect(first.stdout).toContain(
      '\n--- SMS (critical only, as a phone receives it) ---\ndomain-sentinel> 7 critical: ',
    );
    // stdout holds the alert alone (piped to mail, saved to a file); the scan's own lines go to stderr.
    expect(first.stdout).not.toMatch(/delivered the alert|state saved/);
    expect(first.stderr).toMatch(
      /^delivered the alert to stdout \(\d+ new, 2 new unreadable records\)\nstate saved to .*state\.json\n$/,
    );
    expect(JSON.parse(readFileSync(state, 'utf8')).generation).toBe(1);

    const second = await runCli(['scan', '--state', state, '--alert-to', 'stdout', '--now', NOW], env());
    expect(second).toMatchObject({ code: 0, stdout: '' });
    expect(second.stderr).toBe(
      `no alert published: nothing new, escalated, changed or resolved at warning or above\nstate saved to ${state}\n`,
    );
  });

  it('appends each delivered alert to a FILE, and nothing when there is no news', async () => {
    const dir = freshDir();
    const [state, file] = [join(dir, 'state.json'), join(dir, 'out', 'alerts.txt')];
    const args = ['scan', '--state', state, '--alert-to', file, '--now', NOW];
    const first = await runCli(args, env());
    expect(first.stdout).toMatch(new RegExp(`^appended the alert to ${file} \\(`));
    const once = readFileSync(file, 'utf8');
    expect(once.match(/^Subject: /gm)).toHaveLength(1);
    await runCli(args, env());
    expect(readFileSync(file, 'utf8')).toBe(once);
    // Without --state it delivers too: no SNS needed to see the alert.
    const stateless = await runCli(['scan', '--alert-to', file, '--now', NOW], env());
    expect(stateless.stdout).toBe(`appended the alert to ${file}\n`);
    expect(readFileSync(file, 'utf8').match(/^Subject: /gm)).toHaveLength(2);
  });

  it('refuses --alert-to with --dry-run, and stdout twice over with --json', async () => {
    const both = await runCli(['scan', '--dry-run', '--alert-to', 'stdout'], env());
    expect(both).toMatchObject({ code: 2 });
    expect(both.stderr).toContain(
      '--dry-run delivers nothing and --alert-to delivers the alert: pass one of them',
    );
    const json = await runCli(['scan', '--json', '--alert-to', 'stdout'], env());
    expect(json.stderr).toContain('use --alert-to FILE');
    const neither = await runCli(['scan'], env());
    expect(neither.stderr).toContain('pass --alert-to stdout to print it, or pass --dry-run');
  });
});

describe('what simulate and serve print', () => {
  function pasted(shell: string, text: string, extra: NodeJS.ProcessEnv = {}) {
    const run = spawnSync(
      shell,
      [
        '-c',
        `set -e\n${text}\nprintf '%s\\n%s\\n%s' "$RESELLER_BASE_URL" "$RESELLER_API_KEY" "$LINK_BASE_URL"`,
      ],
      {
        env: { PATH: process.env.PATH, ...extra },
        encoding: 'utf8',
      },
    );
    return { code: run.status, values: run.stdout.split('\n'), stderr: run.stderr };
  }

  it('pastes into bash and sh as printed, with a key it made up or without one it was given', async () => {
    const own = await startCliServer(['simulate', '--port', '0', '--domains', '20'], {});
    const given = await startCliServer(['simulate', '--port', '0', '--domains', '20'], {
      RESELLER_API_KEY: KEY,
    });
    try {
      for (const shell of ['bash', 'sh']) {
        const made = pasted(shell, own.output().stdout);
        expect(made.code, made.stderr).toBe(0);
        expect(made.values[0]).toBe(own.url);
        expect(made.values[1]).toMatch(/^sim-[0-9a-f]{24}$/);
        const kept = pasted(shell, given.output().stdout, { RESELLER_API_KEY: KEY });
        expect(kept.code, kept.stderr).toBe(0);
        expect(kept.values.slice(0, 2)).toEqual([given.url, KEY]);
      }
      expect(given.output().stdout).not.toContain(KEY);
      // What was pasted is what the simulator accepts.
      const [baseUrl, apiKey] = pasted('sh', own.output().stdout).values;
      const scan = await runCli(['scan', '--dry-run'], {
        RESELLER_BASE_URL: baseUrl,
        RESELLER_API_KEY: apiKey,
      });
      expect(scan.code, scan.stderr).toBe(0);
    } finally {
      await own.stop();
      await given.stop();
    }
  });

  it('serve’s line pastes too', async () => {
    const serve = await startCliServer(['serve', '--port', '0'], { ...env(), LINK_SIGNING_KEY: SIGNING_KEY });
    const run = pasted('sh', serve.output().stdout);
    await serve.stop();
    expect(run.code, run.stderr).toBe(0);
    expect(run.values[2]).toBe(serve.url);
  });
});

describe('a link signed with another key', () => {
  it('says which key id it was signed with and which this server holds, apart from a changed link', async () => {
    const serve = await startCliServer(['serve', '--port', '0'], { ...env(), LINK_SIGNING_KEY: SIGNING_KEY });
    try {
      const otherKey = 'another-laptop-signing-key-0123456789abcdef';
      const link = (
        await runCli(['link', 'haven-6.com'], {
          ...env(),
          LINK_SIGNING_KEY: otherKey,
          LINK_BASE_URL: serve.url,
        })
      ).stdout.trim();
      const [theirs, ours] = [parseSigningKeys(otherKey)[0]?.id, parseSigningKeys(SIGNING_KEY)[0]?.id];
      const page = await fetch(link);
      expect(page.status).toBe(403);
      const html = await page.text();
      expect(html).toContain('This link was signed with another key');
      expect(html).toContain(
        `This link was signed with key id ${theirs}; this server holds ${ours}: are both sides using the same LINK_SIGNING_KEY?`,
      );
      const ownLink = (
        await runCli(['link', 'haven-6.com'], {
          ...env(),
          LINK_SIGNING_KEY: SIGNING_KEY,
          LINK_BASE_URL: serve.url,
        })
      ).stdout.trim();
      const changed = await fetch(ownLink.replace('haven-6.com', 'haven-1a.nl'));
      expect(changed.status).toBe(403);
      const changedHtml = await changed.text();
      expect(changedHtml).toContain('The link was changed');
      expect(changedHtml).not.toContain('key id');
    } finally {
      await serve.stop();
    }
  });
});

/**
 * A receiver of everything the real configuration in a person's environment would reach (their
 * chat webhook, their heartbeat check), counting what arrives.
 */
async function realEndpoints() {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { hits, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('the try-outs leave a real configuration in the environment alone', () => {
  it('try-alerts publishes to its emulator only: no webhook, heartbeat, state or report of the real setup', async () => {
    const real = await realEndpoints();
    const dir = freshDir();
    try {
      const run = await runCli(['try-alerts', '--now', NOW], {
        WEBHOOK_URL: `${real.url}/hook`,
        WEBHOOK_FORMAT: 'json',
        HEARTBEAT_URL: `${real.url}/hb`,
        STATE: join(dir, 'state.json'),
        REPORT_DIR: join(dir, 'reports'),
        LINK_SIGNING_KEY: SIGNING_KEY,
        LINK_BASE_URL: 'https://links.example.net',
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('queue all-alerts received 1 message');
      expect(real.hits).toEqual([]);
      expect(existsSync(join(dir, 'state.json'))).toBe(false);
      expect(existsSync(join(dir, 'reports'))).toBe(false);
    } finally {
      await real.close();
    }
  }, 60_000);

  it('demo scans its own simulator whatever state the environment names', async () => {
    const dir = freshDir();
    const state = join(dir, 'state.json');
    writeFileSync(state, '{"a real account’s state, as far as the demo can tell');
    const run = await runCli(['demo', '--now', NOW], { STATE: state });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('haven-6.com');
  });
});
