import { EnvSecretSource } from '../../functions/aws/secrets';
import { accountSummaryOf } from '../../functions/core/alerts/account-summary';
import { headline, reportReaches } from '../../functions/core/alerts/alert';
import { withKeySource } from '../../functions/core/base/errors';
import { SEVERITIES, type Severity } from '../../functions/core/findings/classify';
import { signLinkQuery } from '../../functions/core/links/links';
import {
  accountLinkBase,
  accountRawSettings,
  accountScope,
  accountSecrets,
  overviewLinkPath,
  overviewSigningKeys,
} from '../../functions/core/scan/accounts';
import { ENV, loadScanSettings, parseSetting } from '../../functions/core/scan/config';
import type { Report } from '../../functions/core/scan/scan';
import { type AccountSettings, readAccountsFile } from '../../lib/config';
import { accountKeySource, accountKeyWords, sameKeyCheck, selectedAccounts } from '../accounts';
import {
  accountEntryOf,
  flagsOf,
  noPositionals,
  oneOf,
  parseNow,
  positiveInt,
  settingsWithFlags,
  str,
} from '../args';
import { type CliIo, EXIT, type ParsedArgs } from '../command';
import { heartbeatUrlOf } from '../heartbeat';
import { InterruptedError } from '../interrupt';
import { accountStateLocation, accountStoresFor, stateLocationOf, stateLocationText } from '../local-stores';
import { withPoliciesFile } from '../policies-file';
import { DEFAULT_ACCOUNT_CONCURRENCY, scan } from './index';
import { chooseDelivery, scanOnce, scanRunOf } from './scan';

/**
 * `scan --accounts FILE`: every account of an accounts file, each as its own scan (its own key,
 * reseller client and pace, state scope, report and alert), a few at a time. One account that
 * cannot be read does not stop the others: its entry carries the error, and the exit status says
 * so once every account was tried.
 */

/** What one account's scan came to: its report, or why it could not be read. */
type AccountOutcome =
  | { readonly account: AccountSettings; readonly report: Report; readonly output: string }
  | { readonly account: AccountSettings; readonly error: Error; readonly output: string };

/** The entry of an account that could not be read, in `--json`'s list. */
function errorEntry(account: AccountSettings, baseUrl: string | undefined, error: Error) {
  return {
    source: { account: account.name, ...(baseUrl ? { base_url: baseUrl } : {}) },
    error: { name: error.name, message: error.message.split('\n')[0] },
  };
}

/** Runs `fn` over `items` with at most `limit` at once, keeping their order in the results. */
async function pooled<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** `scan --accounts FILE`: every account (or `--account NAME`), then one line each; returns the exit status. */
export async function scanAccounts(args: ParsedArgs, io: CliIo): Promise<number> {
  noPositionals(scan, args);
  const file = str(args.values.accounts) as string;
  const failOn = oneOf(str(args.values['fail-on']), '--fail-on', SEVERITIES);
  const concurrency = positiveInt(
    str(args.values['account-concurrency']),
    '--account-concurrency',
    DEFAULT_ACCOUNT_CONCURRENCY,
    32,
  );
  const now = parseNow(str(args.values.now));
  const accounts = selectedAccounts(file, str(args.values.account), io.cwd);
  const json = args.values.json === true;
  const base = withPoliciesFile(settingsWithFlags(scan, args, io.env), io);
  // What every account shares is checked once, up front: a bad flag, no way to deliver, links
  // without a signing key are exit 2 for all, before any account is read. A shared base URL is
  // needed only by an account that names none of its own.
  const ownBaseUrl = accounts.every((a) => a.resellerBaseUrl !== undefined)
    ? accounts[0]?.resellerBaseUrl
    : undefined;
  const shared = loadScanSettings(
    { ...base, resellerBaseUrl: base.resellerBaseUrl ?? ownBaseUrl },
    flagsOf(scan),
  );
  chooseDelivery(args, shared, json, io.env);
  heartbeatUrlOf(args, io.env);
  if (shared.linkBaseUrl) new EnvSecretSource(io.env).signingKeysNow();
  const location = stateLocationOf(str(args.values.state), io.env);
  const stores = accountStoresFor({ env: io.env, stateFlag: str(args.values.state), cwd: io.cwd });
  // Against every account of the file: `--account brand-a-copy` alone must not rescan brand-a's domains.
  const sameKey = sameKeyCheck(readAccountsFile(file, io.cwd), io.env, (a) => baseUrlOf(a, base), file);

  const outcomes = await pooled(accounts, concurrency, async (account): Promise<AccountOutcome> => {
    // Accounts scan at once: each one's output is kept and printed whole, under its name.
    const chunks: string[] = [];
    const keep = (text: string) => chunks.push(text);
    const own: CliIo = { ...io, stdout: keep, stderr: keep };
    try {
      const settings = loadScanSettings(accountRawSettings(base, accountEntryOf(account)), flagsOf(scan));
      const secrets = accountSecrets(accountKeySource(io.env, account), account.name);
      await secrets.apiKey();
      sameKey(account.name);
      const run = scanRunOf(
        args,
        own,
        settings.linkBaseUrl
          ? { ...settings, linkBaseUrl: accountLinkBase(settings.linkBaseUrl, account.name) }
          : settings,
        secrets,
        now,
        failOn,
        account.name,
      );
      const accountRun = { ...run, json, job: { ...run.job, account: account.name } };
      const place = {
        scope: accountScope(settings.resellerBaseUrl, account.name),
        reports: stores?.reports(account.name) ?? null,
        // A refusal (a rotated key) names the exact command that rebinds this account's state.
        rebind: {
          state: stateLocationText(str(args.values.state), io.env) ?? '',
          account: { name: account.name, accountsFile: file },
          ...(account.resellerBaseUrl === undefined ? { baseUrl: settings.resellerBaseUrl } : {}),
        },
        summarize: async (report: Report) =>
          stores?.summaries.put(accountSummaryOf(report, account.name, settings.accountLabel)),
      };
      const state = location && accountStateLocation(location, account.name);
      const once = () => scanOnce(accountRun, state, own, place);
      const report = run.heartbeat ? await run.heartbeat.around(own, once) : await once();
      if (!report)
        return { account, error: new Error('superseded by a later scan'), output: chunks.join('') };
      return { account, report, output: chunks.join('') };
    } catch (error) {
      return { account, error: accountError(account, error), output: chunks.join('') };
    }
  });

  printOutcomes(outcomes, json, base, io, now);
  return exitOf(outcomes, failOn, io);
}

/** Why an account could not be read; a refused key names the account's own variable, the key that was sent. */
function accountError(account: AccountSettings, thrown: unknown): Error {
  const error = withKeySource(thrown, accountKeyWords(account));
  return error instanceof Error ? error : new Error(String(error));
}

/** Exit 1 once every account was tried if one could not be read (each named), else --fail-on's. */
function exitOf(outcomes: readonly AccountOutcome[], failOn: Severity | undefined, io: CliIo): number {
  const failed = outcomes.filter((o): o is Extract<AccountOutcome, { error: Error }> => 'error' in o);
  // An account the signal stopped did not fail: main() ends with the one line that says it stopped.
  for (const o of failed.filter((f) => !stoppedBy(f.error, io)))
    io.stderr(`sentinel: account ${o.account.name} could not be read: ${o.error.message.split('\n')[0]}\n`);
  if (failed.length > 0) return EXIT.failed;
  const reached = (level: Severity) => outcomes.some((o) => 'report' in o && reportReaches(o.report, level));
  if (failOn && reached(failOn)) {
    io.stderr(`sentinel: findings at ${failOn} or above (--fail-on ${failOn})\n`);
    return EXIT.failOn;
  }
  return EXIT.ok;
}

/**
 * The signal's own reason, when it is what ended this account's scan (a Ctrl-C, not a failure):
 * the reason itself, or anywhere in the error's causes an abort the signal caused (a store wraps the
 * AWS SDK's own AbortError in its StateError; the SDK rejects with that, not with the reason).
 */
function stoppedBy(error: Error, io: CliIo): InterruptedError | undefined {
  const reason: unknown = io.signal?.reason;
  if (!(reason instanceof InterruptedError)) return undefined;
  // Bounded: a cause chain that loops back on itself ends the walk.
  let cause: unknown = error;
  for (let depth = 0; depth < 16 && cause instanceof Error; depth++, cause = cause.cause)
    if (cause === reason || cause.name === 'AbortError') return reason;
  return undefined;
}

/** Every account's output under its name, then `--json`'s list or one summary line each. */
function printOutcomes(
  outcomes: readonly AccountOutcome[],
  json: boolean,
  base: Record<string, string | undefined>,
  io: CliIo,
  now: number,
): void {
  if (json) {
    for (const o of outcomes) if (o.output) io.stderr(prefixed(o.account.name, o.output));
    const entries = outcomes.map((o) =>
      'report' in o ? o.report : errorEntry(o.account, baseUrlOf(o.account, base), o.error),
    );
    io.stdout(`${JSON.stringify({ accounts: entries }, null, 2)}\n`);
  } else {
    for (const o of outcomes) io.stdout(`== account ${o.account.name} ==\n${o.output}\n`);
    io.stdout(`${summaryLines(outcomes, io, now)}\n`);
  }
}

/** The account's reseller, for an error entry (the setting may itself be what failed). */
function baseUrlOf(account: AccountSettings, base: Record<string, string | undefined>): string | undefined {
  try {
    return parseSetting('resellerBaseUrl', account.resellerBaseUrl ?? base.resellerBaseUrl);
  } catch {
    return undefined;
  }
}

const prefixed = (name: string, text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => `[${name}] ${line}\n`)
    .join('');

/** The last lines: one per account (its counts, or that it could not be read), then the overview's link. */
function summaryLines(outcomes: readonly AccountOutcome[], io: CliIo, now: number): string {
  const lines = outcomes.map((o) => {
    if ('report' in o) return `${o.account.name}: ${headline(o.report)}`;
    const stopped = stoppedBy(o.error, io);
    return stopped
      ? `${o.account.name}: STOPPED by ${stopped.signal} before it finished`
      : `${o.account.name}: COULD NOT BE READ: ${o.error.message.split('\n')[0]}`;
  });
  const overview = overviewLink(io.env, now);
  return [
    `Accounts (${outcomes.length}):`,
    ...lines.map((l) => `  ${l}`),
    ...(overview ? [overview] : []),
  ].join('\n');
}

/** The signed link of the overview page of every account, when links are configured. */
function overviewLink(env: NodeJS.ProcessEnv, now: number): string | undefined {
  const secrets = new EnvSecretSource(env);
  const baseUrl = env[ENV.linkBaseUrl]?.trim();
  if (!baseUrl || !secrets.hasSigningKeys()) return undefined;
  const ttlDays = parseSetting('linkTtlDays', env[ENV.linkTtlDays]);
  const query = signLinkQuery({
    action: 'report',
    keys: overviewSigningKeys(secrets.signingKeysNow()),
    now,
    ttlSeconds: ttlDays * 86_400,
  });
  return `Overview of every account: ${baseUrl.replace(/\/+$/, '')}/${overviewLinkPath}?${query}`;
}
