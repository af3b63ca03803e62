import { execFile } from 'node:child_process';
import { constants, existsSync, readFileSync } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch as hostArch, platform as hostPlatform } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';

const execFileAsync = promisify(execFile);

/** Where Debian's `chromium` package puts the browser. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Ours: headless, off the (closed) network, and able to run as root in a container without a sandbox. */
export const BASE_CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/**
 * Switches of @sparticuz/chromium's recommended list that we leave out, and why. Its list is made for
 * scraping on Lambda; ours drives a security-sensitive page whose CSP and origin checks must behave as
 * in a user's browser.
 */
export const DROPPED_PACKAGE_ARGS: Readonly<Record<string, string>> = {
  '--disable-web-security': 'turns off the same-origin policy the restore page relies on',
  '--allow-running-insecure-content': 'allows mixed content a real browser blocks',
  '--disable-site-isolation-trials': 'weakens site isolation',
  '--disable-features': 'turns off IsolateOrigins and site-per-process; Playwright sets its own list',
  '--enable-features': 'SharedArrayBuffer everywhere; no page here needs it, Playwright sets its own list',
  '--single-process': 'unsupported by Chromium; only needed for a prctl limit of Lambda',
  '--headless': "its value is `'shell'` with literal quotes; ours is plain --headless",
  '--use-gl': 'the GPU stack is off (--disable-gpu)',
  '--use-angle': 'the GPU stack is off (--disable-gpu)',
  '--enable-unsafe-swiftshader': 'the GPU stack is off (--disable-gpu)',
  '--ignore-gpu-blocklist': 'the GPU stack is off (--disable-gpu)',
  '--in-process-gpu': 'the GPU stack is off (--disable-gpu)',
};

const switchName = (arg: string) => arg.split('=', 1)[0] ?? arg;

/**
 * Our switches plus @sparticuz/chromium's recommended ones, minus {@link DROPPED_PACKAGE_ARGS}; ours win
 * where both name the same switch.
 */
export function chromiumArgs(packageArgs: readonly string[]): string[] {
  const ours = new Set(BASE_CHROMIUM_ARGS.map(switchName));
  const kept = packageArgs.filter((arg) => {
    const name = switchName(arg);
    return !(name in DROPPED_PACKAGE_ARGS) && !ours.has(name);
  });
  return [...BASE_CHROMIUM_ARGS, ...new Set(kept)];
}

/** No usable Chromium: the message says which one was tried and what to do. */
export class ChromiumNotFoundError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChromiumNotFoundError';
  }
}

/** A Chromium was found but did not start. */
export class ChromiumLaunchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChromiumLaunchError';
  }
}

/** Which browser the tests use, and where it came from. */
export interface ResolvedChromium {
  readonly executablePath: string;
  readonly source: 'CHROMIUM_PATH' | 'system' | 'bundled';
  /** Extra shared-library folders the binary needs (only @sparticuz/chromium on Amazon Linux 2023). */
  readonly libraryPaths: readonly string[];
}

/** Seams for tests of the resolution itself; the defaults are the real machine. */
export interface ResolveChromiumOptions {
  /** @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** @default {@link SYSTEM_CHROMIUM} */
  readonly systemPath?: string;
  /** @default node_modules/.cache/domain-sentinel-chromium of this install */
  readonly cacheRoot?: string;
  /** @default the host's `os.platform()` and `os.arch()` */
  readonly host?: { readonly platform: string; readonly arch: string };
}

const isExecutable = async (path: string) => {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
};

/**
 * Finds the browser for the tests: `CHROMIUM_PATH` if set, then Debian's /usr/bin/chromium, then the
 * Chromium shipped inside the @sparticuz/chromium package, unpacked once into a cache under
 * node_modules (nothing is downloaded).
 */
export async function resolveChromium(options: ResolveChromiumOptions = {}): Promise<ResolvedChromium> {
  const env = options.env ?? process.env;
  const fromEnv = env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!(await isExecutable(fromEnv))) {
      throw new ChromiumNotFoundError(
        `CHROMIUM_PATH=${fromEnv} is not an executable file: point it at a Chromium or Chrome binary, ` +
          'or unset it to use /usr/bin/chromium or the Chromium bundled with @sparticuz/chromium',
      );
    }
    return { executablePath: fromEnv, source: 'CHROMIUM_PATH', libraryPaths: [] };
  }
  const systemPath = options.systemPath ?? SYSTEM_CHROMIUM;
  if (await isExecutable(systemPath)) {
    return { executablePath: systemPath, source: 'system', libraryPaths: [] };
  }
  const host = options.host ?? { platform: hostPlatform(), arch: hostArch() };
  if (host.platform !== 'linux' || host.arch !== 'x64') {
    throw new ChromiumNotFoundError(
      `No Chromium found: ${systemPath} does not exist, and the Chromium bundled with @sparticuz/chromium ` +
        `runs on Linux x64 only (this is ${host.platform}-${host.arch}). Set CHROMIUM_PATH to a Chromium ` +
        'or Chrome binary (on macOS: "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")',
    );
  }
  return unpackBundledChromium(options.cacheRoot);
}

const notInstalled = (cause: unknown) =>
  new ChromiumNotFoundError(
    'The devDependency @sparticuz/chromium is not installed (it bundles Chromium and recommends its ' +
      'flags): run `npm ci` in the repository',
    { cause },
  );

const packageEntry = () => {
  try {
    return createRequire(import.meta.url).resolve('@sparticuz/chromium');
  } catch (error) {
    throw notInstalled(error);
  }
};

/** @sparticuz/chromium's recommended switches, loaded only when a browser is launched. */
async function packageRecommendedArgs(): Promise<readonly string[]> {
  try {
    return (await import('@sparticuz/chromium')).default.args;
  } catch (error) {
    throw notInstalled(error);
  }
}

// One unpack per test worker; other workers and later runs find the finished folder.
const unpacking = new Map<string, Promise<ResolvedChromium>>();

function unpackBundledChromium(cacheRoot: string | undefined): Promise<ResolvedChromium> {
  const entry = packageEntry();
  // entry is <package>/build/cjs/index.cjs: the package's own `exports` hide its package.json.
  const packageDir = dirname(dirname(dirname(entry)));
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const root = cacheRoot ?? join(packageDir, '..', '..', '.cache', 'domain-sentinel-chromium');
  const target = join(root, version);
  let pending = unpacking.get(target);
  if (!pending) {
    pending = unpackInto(target, entry, join(packageDir, 'bin'));
    unpacking.set(target, pending);
    pending.catch(() => unpacking.delete(target));
  }
  return pending;
}

const bundled = (folder: string): ResolvedChromium => {
  // Only present when the package thinks it runs on Amazon Linux 2023 (e.g. CodeBuild's Node images).
  const al2023 = join(folder, 'al2023', 'lib');
  return {
    executablePath: join(folder, 'chromium'),
    source: 'bundled',
    libraryPaths: existsSync(al2023) ? [al2023] : [],
  };
};

const STALE_STAGING_MS = 60 * 60 * 1000;

async function unpackInto(target: string, entry: string, brotliFolder: string): Promise<ResolvedChromium> {
  // The target only ever appears by rename of a complete folder, so its presence means complete.
  if (existsSync(join(target, 'chromium'))) return bundled(target);
  const root = dirname(target);
  await mkdir(root, { recursive: true });
  await removeStaleStaging(root);
  const staging = await mkdtemp(`${target}.unpacking-`);
  try {
    // executablePath(location) reads the .br files from `location` but always writes into os.tmpdir();
    // a child process with TMPDIR set to our staging folder keeps that off /tmp and off this process.
    const script =
      'require(process.argv[1]).executablePath(process.argv[2])' +
      '.then((p) => process.stdout.write(p), (e) => { console.error(e); process.exit(1); })';
    const { stdout } = await execFileAsync(process.execPath, ['-e', script, entry, brotliFolder], {
      env: { ...process.env, TMPDIR: staging },
    });
    if (stdout !== join(staging, 'chromium') || !(await isExecutable(stdout))) {
      throw new Error(
        `@sparticuz/chromium unpacked to ${stdout || '(nothing)'}, expected ${staging}/chromium`,
      );
    }
    try {
      await rename(staging, target);
    } catch (error) {
      // Another worker finished first (ENOTEMPTY/EEXIST): use its copy.
      if (!existsSync(join(target, 'chromium'))) throw error;
    }
  } catch (error) {
    throw new ChromiumNotFoundError(
      `Could not unpack the Chromium bundled with @sparticuz/chromium into ${target}: ` +
        'check that node_modules is writable and has ~250 MB free, or set CHROMIUM_PATH to a Chromium binary',
      { cause: error },
    );
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return bundled(target);
}

/** Leftovers of runs killed mid-unpack; an hour is far longer than any unpack takes. */
async function removeStaleStaging(root: string) {
  for (const name of await readdir(root)) {
    if (!name.includes('.unpacking-')) continue;
    const path = join(root, name);
    const stale = await stat(path).then(
      (s) => Date.now() - s.mtimeMs > STALE_STAGING_MS,
      () => false,
    );
    if (stale) await rm(path, { recursive: true, force: true });
  }
}

/**
 * Launches headless Chromium (see {@link resolveChromium}) through playwright-core. Playwright gives
 * every launch a fresh temporary profile (`--user-data-dir`) and deletes it on close.
 */
export async function launchBrowser(options: ResolveChromiumOptions = {}): Promise<Browser> {
  const resolved = await resolveChromium(options);
  const args = chromiumArgs(await packageRecommendedArgs());
  const env = options.env ?? process.env;
  const libraryPaths = [...resolved.libraryPaths, ...(env.LD_LIBRARY_PATH ?? '').split(delimiter)].filter(
    Boolean,
  );
  try {
    return await chromium.launch({
      executablePath: resolved.executablePath,
      args,
      env: libraryPaths.length > 0 ? { ...env, LD_LIBRARY_PATH: libraryPaths.join(delimiter) } : env,
    });
  } catch (error) {
    const hint = {
      bundled:
        ' It needs libnss3, libnspr4 and libexpat1 from the system (apt-get install libnss3 libexpat1), ' +
        'or set CHROMIUM_PATH to another Chromium.',
      system: ' Repair or remove that package, or set CHROMIUM_PATH to another Chromium.',
      CHROMIUM_PATH: ' Point CHROMIUM_PATH at a working Chromium, or unset it to use the bundled one.',
    }[resolved.source];
    throw new ChromiumLaunchError(
      `Chromium at ${resolved.executablePath} (${resolved.source}) did not start.${hint}`,
      { cause: error },
    );
  }
}

/** Closes a browser from {@link launchBrowser}; a no-op when the launch never happened. */
export async function closeBrowser(browser: Browser | undefined): Promise<void> {
  await browser?.close();
}
