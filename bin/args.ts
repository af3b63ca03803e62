import { parseArgs } from 'node:util';
import { ConfigError } from '../functions/core/base/errors';
import { closest, editDistance } from '../functions/core/base/suggest';
import { normalizeDomainName } from '../functions/core/base/text';
import { domainNameProblem } from '../functions/core/links/links';
import { REPORT_ENV } from '../functions/core/memory/report-store';
import { parseRfc3339 } from '../functions/core/reseller/schemas';
import {
  ACCOUNT_SCAN_SETTINGS,
  type AccountScanInput,
  accountRawSettings,
} from '../functions/core/scan/accounts';
import {
  type FlagOf,
  parseSetting,
  type RawSettings,
  type ScanSettings,
  SECRET_SETTINGS,
  SETTINGS,
  type SettingName,
  type SettingSpec,
  settingsFromEnv,
} from '../functions/core/scan/config';
import type { AccountSettings } from '../lib/config';
import { type Command, type ParsedArgs, UsageError } from './command';
import { asksForVersion } from './version';

/**
 * A command's argv, read against its declaration: every refusal is ours, in words that name the
 * command and a flag it accepts, never Node's parser text. Also the small value parsers the
 * commands share.
 */

/** `--help` or `-h` before a `--`: the command's help instead of the command. */
export function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** Which commands have a flag, for "--state is a flag of scan, snooze, ack". */
export type FlagOwners = (flag: string) => readonly string[];

/** Parses `argv` against `command`'s options; unknown flags and missing values are UsageErrors. */
export function parseCommandArgs(
  command: Command,
  argv: readonly string[],
  owners: FlagOwners = () => [],
): ParsedArgs {
  const options = Object.fromEntries(
    Object.entries(command.options).map(([flag, o]) => [flag, { type: o.type }]),
  );
  // Lenient mode and tokens: every check below is ours, so every message is too.
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const spec = command.options[token.name];
    if (!spec) throw unknownFlag(command, wordOf(token, argv), owners);
    if (spec.type === 'boolean') {
      if (token.inlineValue)
        throw new UsageError(`${token.rawName} takes no value (got ${token.rawName}=${token.value})`);
      values[token.name] = true;
    } else {
      // `--now --json`: the parser would take `--json` as the value; a value never starts with '-'.
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))
        throw needsValue(command, token.rawName, token.value, owners);
      // `--expiry-days ""` (a variable that was not set): the setting would read it as unset and
      // take its default, or none at all (--policies), without a word.
      if (token.value === '')
        throw new UsageError(
          `${token.rawName} is empty; give it a value (${token.rawName} ${spec.value ?? 'VALUE'}) or leave it out`,
        );
      // Two values, one kept: the one a person meant is not known, so neither is taken.
      const before = values[token.name];
      if (typeof before === 'string' && before !== token.value)
        throw new UsageError(
          spec.secret
            ? `${token.rawName} is given twice, with two values (not shown: a secret); give it once`
            : `${token.rawName} is given twice (${before}, then ${token.value}); give it once`,
        );
      values[token.name] = token.value;
    }
  }
  return { values, positionals };
}

/**
 * `--now --json`: the flag was last, or another flag followed it. A word after it that is no flag
 * (`--expiry-days -5`, `--state -x.json`) is a value that starts with '-': say how to give one.
 */
function needsValue(command: Command, raw: string, next: string | undefined, owners: FlagOwners): UsageError {
  const spec = command.options[raw.replace(/^-+/, '')];
  const usage = `${raw} needs a value (${raw} ${spec?.value ?? 'VALUE'})`;
  const name = next?.replace(/^-+/, '').replace(/=.*$/, '') ?? '';
  const isFlag =
    next === undefined ||
    ['-h', '--help'].includes(next) ||
    asksForVersion(next) ||
    name in command.options ||
    owners(name).length > 0;
  return new UsageError(
    isFlag
      ? `${usage}; see sentinel ${command.name} --help`
      : `${usage}; ${next} reads as a flag: write ${raw}=${next} for a value that starts with -`,
  );
}

/**
 * The flag as the person wrote it: `-dry-run` (one dash for two) reaches us as the short flags
 * -d, -r, -y, …, and a message about `-d` would name a flag nobody typed.
 */
function wordOf(token: { rawName: string; index: number }, argv: readonly string[]): string {
  const word = argv[token.index] ?? token.rawName;
  return /^-[^-]/.test(word) && word.length > 2 ? word : token.rawName;
}

function unknownFlag(command: Command, raw: string, owners: FlagOwners): UsageError {
  // -v is --version, as in most tools, and like it comes before any command: never a command's flag.
  if (asksForVersion(raw)) return new UsageError(`${raw} is --version, before any command: sentinel ${raw}`);
  const flags = Object.keys(command.options).map((f) => `--${f}`);
  const near = closest(raw.replace(/=.*$/, ''), flags);
  // Only a `--flag` is some command's flag: `-port` is no flag of any.
  const elsewhere = raw.startsWith('--')
    ? owners(raw.replace(/^-+/, '')).filter((name) => name !== command.name)
    : [];
  // `-x.json`: a path, not a flag, that a person cannot otherwise tell the parser.
  const path = /^-[^-]/.test(raw) && /[./]/.test(raw);
  const hint = near
    ? `did you mean ${near}?`
    : path
      ? `a path that starts with - is written ./${raw}`
      : flags.length
        ? `${command.name} takes ${flags.join(', ')}`
        : `${command.name} takes no flags`;
  const other = elsewhere.length ? ` (${raw} is a flag of ${elsewhere.join(', ')})` : '';
  return new UsageError(`unknown flag ${raw} for ${command.name}${other}; ${hint}`);
}

/** A word of the command line as a message quotes it: an empty one would read as nothing at all. */
export const shownWord = (word: string | undefined): string =>
  word === '' || word === undefined ? 'an empty value ""' : word;

/** The string value of a flag (booleans are flags without a value). */
export const str = (value: string | boolean | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** The flag of `command` bound to each setting, so a message names only flags it accepts. */
export function flagsOf(command: Command): FlagOf {
  return (name) => {
    const found = Object.entries(command.options).find(([, o]) => o.setting === name);
    return found ? `--${found[0]}` : undefined;
  };
}

/** Settings from the environment, with every flag of the command that is bound to a setting on top. */
export function settingsWithFlags(command: Command, args: ParsedArgs, env: NodeJS.ProcessEnv): RawSettings {
  const raw: RawSettings = settingsFromEnv(env);
  for (const [flag, option] of Object.entries(command.options)) {
    const value = str(args.values[flag]);
    if (option.setting && value !== undefined) raw[option.setting as SettingName] = value;
    // A flag without a value turns its on/off setting on (`--registry-check`: REGISTRY_CHECK=on).
    if (option.setting && option.type === 'boolean' && args.values[flag] === true)
      raw[option.setting as SettingName] = 'on';
  }
  return raw;
}

/**
 * Only the settings a command uses, from its flags over the environment, each checked with its
 * schema: a command is not refused for a setting it never reads. Every problem is named at once.
 * With `account` (`--account NAME`), that account's own settings of its accounts file win.
 */
export function loadSettings<N extends SettingName>(
  command: Command,
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  names: readonly N[],
  account?: AccountSettings,
): Pick<ScanSettings, N> {
  const shared = settingsWithFlags(command, args, env);
  // An account's own settings win over the flags and the environment, as in `scan --accounts`.
  const raw = account ? accountRawSettings(shared, accountEntryOf(account)) : shared;
  const out: Partial<Pick<ScanSettings, N>> = {};
  const problems: string[] = [];
  for (const name of names) {
    try {
      out[name] = parseSetting(name, raw[name], flagsOf(command)) as ScanSettings[N];
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (problems.length) throw new ConfigError(problems.join('; '));
  return out as Pick<ScanSettings, N>;
}

/** Every variable the settings tables know, for "did you mean" on a mistyped one. */
export const KNOWN_VARIABLES: readonly string[] = [
  ...(Object.values(SETTINGS) as SettingSpec[]).map((s) => s.env),
  ...SECRET_SETTINGS.map((s) => s.env),
  ...Object.values(REPORT_ENV),
];

/**
 * `env` without any of sentinel's settings or secrets: the environment a try-out (demo,
 * try-alerts) hands its own scan of its own simulator. A person's real configuration there
 * (STATE, WEBHOOK_URL, HEARTBEAT_URL, REPORT_DIR, …) would otherwise be used by the try-out: its
 * alert posted to their chat, their heartbeat pinged for a scan of no real account, their report
 * replaced, their state refused or written.
 */
export function withoutSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const settings = new Set(KNOWN_VARIABLES);
  return Object.fromEntries(Object.entries(env).filter(([name]) => !settings.has(name)));
}

/**
 * Refuses a variable one or two typos away from a setting (`EXPIRY_DAY` for `EXPIRY_DAYS`): left
 * alone, it would be ignored and the default used without a word. Only names that share their first
 * word with a setting of two or more words are compared, so `STAGE` or `PATH` never are.
 */
export function checkVariableNames(env: NodeJS.ProcessEnv, known: readonly string[] = KNOWN_VARIABLES): void {
  const names = new Set(known);
  for (const name of Object.keys(env)) {
    if (names.has(name) || !name.includes('_')) continue;
    const family = known.filter((k) => k.includes('_') && k.split('_')[0] === name.split('_')[0]);
    const near = family
      .map((k) => ({ k, d: editDistance(name, k) }))
      .sort((a, b) => a.d - b.d)
      .find((c) => c.d <= 2);
    if (near) throw new UsageError(`unknown setting ${name}; did you mean ${near.k}?`);
  }
}

/** `--now`: an RFC 3339 instant, or the current time. */
export function parseNow(text: string | undefined, flag = '--now'): number {
  if (text === undefined) return Date.now();
  const ms = parseRfc3339(text);
  if (Number.isNaN(ms))
    throw new UsageError(`${flag} must be an RFC 3339 date-time such as 2026-11-22T06:00:00Z`);
  return ms;
}

/** A TCP port; 0 asks for any free one. */
export function portNumber(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) > 65_535)
    throw new UsageError('--port must be a whole number from 0 to 65535 (0: any free port)');
  return Number(text);
}

/** A whole number from 1 to `max`. */
export function positiveInt(
  text: string | undefined,
  flag: string,
  fallback: number,
  max = 1_000_000,
): number {
  return wholeNumber(text, flag, fallback, 1, max);
}

/** A whole number from `min` to `max`. */
export function wholeNumber(
  text: string | undefined,
  flag: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}`);
  }
  return Number(text);
}

/** One of a fixed list of words. */
export function oneOf<T extends string>(
  text: string | undefined,
  flag: string,
  allowed: readonly T[],
): T | undefined {
  if (text === undefined || allowed.includes(text as T)) return text as T | undefined;
  const near = closest(text, allowed);
  throw new UsageError(
    `${flag} must be one of ${allowed.join(', ')}${near ? `; did you mean ${near}?` : ''}`,
  );
}

/** A command that takes no positional arguments got some. */
export function noPositionals(command: Command, args: ParsedArgs): void {
  if (args.positionals.length)
    throw new UsageError(
      `${command.name} takes no arguments (got ${args.positionals.map(shownWord).join(' ')}); see sentinel ${command.name} --help`,
    );
}

/** The one `<domain>` argument, normalised the way the scan normalises names before it signs links. */
export function domainArgument(command: Command, args: ParsedArgs): string {
  const [given, ...extra] = args.positionals;
  if (!given || extra.length) throw new UsageError(`usage: sentinel ${command.name} <domain>`);
  // Upper case, a trailing dot and Unicode names are accepted and written the way links and the registry use them.
  const domain = normalizeDomainName(given);
  const problem = domainNameProblem(domain);
  if (problem) throw new UsageError(`${JSON.stringify(given)} is not a valid domain name: ${problem}`);
  return domain;
}

/**
 * An account of the file as the scan and the web app take it: its name and its own settings only.
 * Here, not in ./accounts: that module reads keys (the AWS adapter), and help must not load it.
 */
export function accountEntryOf(account: AccountSettings): Pick<AccountScanInput, 'account' | 'settings'> {
  const settings: Record<string, string | number> = {};
  for (const name of ACCOUNT_SCAN_SETTINGS) {
    const value = account[name];
    // Policies are an object in the file and JSON text in the scan's settings, as in POLICIES.
    if (value !== undefined) settings[name] = typeof value === 'object' ? JSON.stringify(value) : value;
  }
  return { account: account.name, settings };
}
