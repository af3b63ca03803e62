import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sparticuzChromium from '@sparticuz/chromium';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BASE_CHROMIUM_ARGS,
  ChromiumLaunchError,
  ChromiumNotFoundError,
  chromiumArgs,
  DROPPED_PACKAGE_ARGS,
  launchBrowser,
  resolveChromium,
} from '../support/chromium';

const execFileAsync = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'sentinel-chromium-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const executable = (name: string) => {
  const path = join(scratch, name);
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, 0o755);
  return path;
};
const missing = join(scratch, 'no-such-chromium');

describe('resolveChromium', () => {
  it('takes CHROMIUM_PATH before the system Chromium', async () => {
    const fromEnv = executable('env-chromium');
    const resolved = await resolveChromium({
      env: { CHROMIUM_PATH: fromEnv },
      systemPath: executable('system-chromium'),
    });
    expect(resolved).toEqual({ executablePath: fromEnv, source: 'CHROMIUM_PATH', libraryPaths: [] });
  });

  it('refuses a CHROMIUM_PATH that does not exist or is not executable, and says what to do', async () => {
    const notExecutable = join(scratch, 'plain-file');
    writeFileSync(notExecutable, 'not a browser');
    for (const path of [missing, notExecutable]) {
      const attempt = resolveChromium({ env: { CHROMIUM_PATH: path }, systemPath: executable('sys') });
      await expect(attempt).rejects.toThrow(ChromiumNotFoundError);
      await expect(attempt).rejects.toThrow(`CHROMIUM_PATH=${path} is not an executable file`);
      await expect(attempt).rejects.toThrow('or unset it');
    }
  });

  it('uses the system Chromium when CHROMIUM_PATH is unset or empty', async () => {
    const systemPath = executable('debian-chromium');
    for (const env of [{}, { CHROMIUM_PATH: '' }]) {
      await expect(resolveChromium({ env, systemPath })).resolves.toEqual({
        executablePath: systemPath,
        source: 'system',
        libraryPaths: [],
      });
    }
  });

  it('tells a macOS user to set CHROMIUM_PATH, since the bundled Chromium is Linux x64 only', async () => {
    const attempt = resolveChromium({
      env: {},
      systemPath: missing,
      host: { platform: 'darwin', arch: 'arm64' },
    });
    await expect(attempt).rejects.toThrow(ChromiumNotFoundError);
    await expect(attempt).rejects.toThrow(/Linux x64 only \(this is darwin-arm64\)\. Set CHROMIUM_PATH/);
  });

  it('unpacks the bundled Chromium once, atomically, when two processes race for an empty cache', {
    timeout: 120_000,
  }, async () => {
    const cacheRoot = join(scratch, 'cache');
    // Two processes, as two vitest workers would be: the in-process memo cannot hide a race.
    const support = join(process.cwd(), 'test', 'support', 'chromium.ts');
    const script =
      `import(${JSON.stringify(support)})` +
      '.then((m) => m.resolveChromium({ env: {}, systemPath: process.argv[1], cacheRoot: process.argv[2] }))' +
      '.then((r) => process.stdout.write(JSON.stringify(r)))';
    const tsx = join('node_modules', '.bin', 'tsx');
    const race = () => execFileAsync(tsx, ['-e', script, missing, cacheRoot], { env: process.env });
    const [first, second] = await Promise.all([race(), race()]);
    const version = sparticuzPackageVersion();
    const expected = {
      executablePath: join(cacheRoot, version, 'chromium'),
      source: 'bundled',
      libraryPaths: [],
    };
    expect(JSON.parse(first.stdout)).toEqual(expected);
    expect(JSON.parse(second.stdout)).toEqual(expected);
    // The loser's staging folder is gone: only the finished folder remains.
    expect(readdirSync(cacheRoot)).toEqual([version]);
    const { stdout } = await execFileAsync(expected.executablePath, ['--version']);
    expect(stdout).toMatch(new RegExp(`^Chromium ${version.split('.')[0]}\\.`));
  });
});

/** The exact pin in package.json: the version the cache folder is named after. */
const sparticuzPackageVersion = () => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  const pinned = manifest.devDependencies['@sparticuz/chromium'] ?? '(missing)';
  // Its patch releases may break: a range here would let npm pick one nobody tested.
  if (!/^\d+\.\d+\.\d+$/.test(pinned))
    throw new Error(`@sparticuz/chromium is not pinned exactly: ${pinned}`);
  return pinned;
};

describe('chromiumArgs', () => {
  const args = chromiumArgs(sparticuzChromium.args);
  const names = args.map((arg) => arg.split('=', 1)[0]);

  it('keeps all our switches and the harmless recommendations of @sparticuz/chromium', () => {
    expect(args.slice(0, BASE_CHROMIUM_ARGS.length)).toEqual([...BASE_CHROMIUM_ARGS]);
    expect(args).toEqual(
      expect.arrayContaining(['--no-zygote', '--no-pings', '--disable-domain-reliability']),
    );
  });

  it('drops the switches that would weaken what the browser tests check', () => {
    expect(sparticuzChromium.args).toContain('--disable-web-security');
    for (const dropped of Object.keys(DROPPED_PACKAGE_ARGS)) {
      if (dropped === '--headless') continue;
      expect(names).not.toContain(dropped);
    }
    expect(args.filter((arg) => arg.startsWith('--headless'))).toEqual(['--headless']);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('launchBrowser', () => {
  it('names the binary and the way out when the browser does not start', async () => {
    const notABrowser = executable('exits-at-once');
    const attempt = launchBrowser({ env: { ...process.env, CHROMIUM_PATH: notABrowser } });
    await expect(attempt).rejects.toThrow(ChromiumLaunchError);
    await expect(attempt).rejects.toThrow(`Chromium at ${notABrowser} (CHROMIUM_PATH) did not start`);
    await expect(attempt).rejects.toThrow('Point CHROMIUM_PATH at a working Chromium');
  });
});
