import { EnvSecretSource } from '../../functions/aws/secrets';
import { ConfigError, SentinelError } from '../../functions/core/base/errors';
import { lastDaysWords, type SilenceAction } from '../../functions/core/decisions/action-decision';
import { classify } from '../../functions/core/findings/classify';
import {
  acknowledgementOf,
  cannotBeSilenced,
  DEFAULT_SNOOZE_DAYS,
  MAX_SNOOZE_DAYS,
  snoozeOf,
} from '../../functions/core/memory/actions';
import { findingWithMemory } from '../../functions/core/memory/renewal-memory';
import { CLOCK_TOLERANCE_MS } from '../../functions/core/memory/state-time';
import { ResellerClient } from '../../functions/core/reseller/client';
import { ENV } from '../../functions/core/scan/config';
import { accountKeySource, namedAccountOf, withAccountKey } from '../accounts';
import { domainArgument, flagsOf, loadSettings, parseNow, positiveInt, str } from '../args';
import { type CliIo, type Command, EXIT, type ParsedArgs, UsageError } from '../command';
import { actionStoreFor } from '../local-stores';
import { ack, snooze } from './index';

/** `sentinel snooze <domain>`. */
export function runSnooze(args: ParsedArgs, io: CliIo): Promise<number> {
  const days = positiveInt(str(args.values.days), '--days', DEFAULT_SNOOZE_DAYS, MAX_SNOOZE_DAYS);
  return silence(snooze, 'snooze', days, args, io);
}

/** `sentinel ack <domain>`. */
export function runAck(args: ParsedArgs, io: CliIo): Promise<number> {
  return silence(ack, 'acknowledge', 0, args, io);
}

/** `--now`, or the current time: refused when the action it dates would not hold. */
function actionTime(command: Command, args: ParsedArgs): number {
  const now = parseNow(str(args.values.now));
  // Dated in the future, the action would not hold: a scan treats a stored time it has not reached as untrue.
  if (now - Date.now() > CLOCK_TOLERANCE_MS)
    throw new UsageError(
      `--now ${args.values.now} is ahead of this machine's clock; ${command.name} acts now or before`,
    );
  return now;
}

/**
 * Dated far back, the snooze ends before today: said, not refused. A snooze is judged at the scan's
 * now, so it still holds for scans dated before its end (the pinned try-out of docs/try-outs.md).
 */
function endedNote(domain: string, days: number, until: string, args: ParsedArgs): string {
  if (Date.parse(until) > Date.now()) return '';
  return `sentinel: note: --now ${args.values.now} with --days ${days} ends the snooze at ${until}, which has passed by this machine's clock: only scans dated before it (scan --now) leave ${domain} out\n`;
}

/**
 * `snooze` / `ack`: what the links do, from the command line. Looks the domain up first (only a
 * domain with a finding can be silenced, and the action remembers the finding as it is), then
 * writes to the state store.
 */
export async function silence(
  command: Command,
  action: SilenceAction,
  days: number,
  args: ParsedArgs,
  io: CliIo,
): Promise<number> {
  const domain = domainArgument(command, args);
  const now = actionTime(command, args);
  // With --account, the account's own reseller, key, rules and state, as its scan has them.
  const named = namedAccountOf(args, io.cwd);
  const settings = loadSettings(
    command,
    args,
    io.env,
    ['resellerBaseUrl', 'requestTimeoutMs', 'expiryDays', 'criticalDays', 'quarantineDays'],
    named?.account,
  );
  const env = { ...io.env, [ENV.resellerBaseUrl]: settings.resellerBaseUrl };
  const store = actionStoreFor(str(args.values.state), env, io.dynamodb, flagsOf(command), named, io.signal);
  if (!store)
    throw new ConfigError(
      `${command.name} needs the state store the scans use: pass --state PATH|dynamodb:TABLE or set ${ENV.state}`,
    );
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey: named
      ? await accountKeySource(io.env, named.account).apiKey()
      : new EnvSecretSource(io.env).apiKeyNow(),
    timeoutMs: settings.requestTimeoutMs,
    ...(io.signal ? { signal: io.signal } : {}),
  });
  const found = await withAccountKey(named, client.findDomain(domain));
  if (!found) throw new SentinelError(`${domain} is not in this reseller account`);
  // Judged as the link judges it (and as the alert did): the record by the scan's rules, then what
  // the scans' memory adds (a renewal_failed the record no longer shows).
  const memory = await store.memoryOf?.(domain).catch(() => undefined);
  const finding = findingWithMemory(
    classify(found, now, {
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      quarantineDays: settings.quarantineDays,
    }),
    found,
    memory,
    now,
  );
  if (!finding)
    throw new SentinelError(
      `${domain} has nothing to report now (renewed, restored or healthy), so there is nothing to ${action}`,
    );
  // A quarantine in its last days to restore is alerted daily whatever anyone chose, as the links say.
  if (cannotBeSilenced(finding))
    throw new SentinelError(
      `${domain} is ${lastDaysWords(finding)}: alerts about it repeat daily until it is restored or gone, and cannot be ${action === 'snooze' ? 'snoozed' : 'acknowledged'}; nothing was changed`,
    );
  if (action === 'snooze') {
    const until = snoozeOf(finding, days, now);
    await store.snooze(domain, until);
    const note = endedNote(domain, days, until.until, args);
    if (note) io.stderr(note);
    io.stdout(
      `snoozed ${domain} until ${until.until} in ${store.location}: alerts leave it out unless it gets worse (now: ${finding.kind}, ${finding.severity})\n`,
    );
  } else {
    await store.acknowledge(domain, acknowledgementOf(finding, now));
    io.stdout(
      `acknowledged ${domain} in ${store.location}: alerts leave it out until its expiry date (${finding.date_expiry.slice(0, 10)}), status or auto-renew changes\n`,
    );
  }
  return EXIT.ok;
}
