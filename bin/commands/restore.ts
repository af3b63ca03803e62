import { randomBytes } from 'node:crypto';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { NotFoundError, SentinelError } from '../../functions/core/base/errors';
import {
  needsConsent,
  notRestoredFor404,
  type RestoreOutcome,
  restoreFromQuarantine,
  typedNameMatches,
} from '../../functions/core/decisions/restore';
import {
  claimHeldLine,
  claimNotReleasedLine,
  settleClaim,
} from '../../functions/core/decisions/restore-claim';
import {
  type RestoreDeadline,
  restoreDeadline,
  tldOf,
} from '../../functions/core/findings/quarantine-periods';
import {
  type AuditTrail,
  auditEntry,
  type ClaimAnswer,
  earlierRestoreLine,
  earlierRestoreOf,
  RESTORE_CLAIM_MS,
  RESTORE_SENDING,
} from '../../functions/core/memory/audit';
import { domainKey } from '../../functions/core/memory/state-bounds';
import { ResellerClient } from '../../functions/core/reseller/client';
import type { Domain } from '../../functions/core/reseller/schemas';
import { ENV } from '../../functions/core/scan/config';
import { accountKeySource, namedAccountOf, withAccountKey } from '../accounts';
import { domainArgument, flagsOf, loadSettings, str } from '../args';
import { type CliIo, EXIT, type ParsedArgs, UsageError } from '../command';
import { auditTrailFor, checkStateFileOf, type StateAccount } from '../local-stores';
import { restore } from './index';

/** `sentinel restore <domain>`: look, ask, restore, confirm. */
export async function runRestore(args: ParsedArgs, io: CliIo): Promise<number> {
  const domain = domainArgument(restore, args);
  // With --account, the account's own reseller, key and settings, and its part of the state.
  const named = namedAccountOf(args, io.cwd);
  const settings = loadSettings(
    restore,
    args,
    io.env,
    ['resellerBaseUrl', 'requestTimeoutMs', 'quarantineDays'],
    named?.account,
  );
  const apiKey = named
    ? await accountKeySource(io.env, named.account).apiKey()
    : new EnvSecretSource(io.env).apiKeyNow();
  const env = { ...io.env, [ENV.resellerBaseUrl]: settings.resellerBaseUrl };
  const trail = await checkedTrailOf(args, env, io, named);
  const yes = args.values.yes === true;
  const again = args.values.again === true;
  const consent = args.values.consent === true;
  const consentNeeded = needsConsent(domain);
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey,
    timeoutMs: settings.requestTimeoutMs,
    // Ctrl-C ends the wait for the reseller's answer in time for the attempt to be kept (not after
    // the shell's grace period, with nothing kept).
    ...(io.signal ? { signal: io.signal } : {}),
  });
  // Looked up first (a read, free): a domain that is not in quarantine needs no consent, and
  // saying so comes before asking for one.
  const found = await withAccountKey(named, findInQuarantine(client, domain));
  if (yes && consentNeeded && !consent)
    throw new UsageError(
      `${domain}: the registry restores a .${tldOf(domain)} name only with the registrant’s consent; pass --consent with --yes once the registrant agreed`,
    );
  if (!yes && !io.ask)
    throw new UsageError(
      `not asking on a non-interactive terminal; pass --yes${consentNeeded ? ' --consent' : ''} to restore without asking`,
    );
  const now = Date.now();
  const warn = (line: string) => io.stderr(`${line}\n`);
  const resent = await earlierRestoreIn(trail, domain, now, warn);
  if (resent && yes && !again)
    throw new SentinelError(`${resent} Nothing was sent: pass --again to send another restore`);
  const deadline = restoreDeadline(found.domain_name, found.date_deleted, now, settings.quarantineDays);
  io.stdout(
    `${domain} is in quarantine; ${restoreByLine(deadline)}.\n${resent ? `${resent}\n` : ''}` +
      'A restore is a paid action: the reseller charges for it, and its API does not state the price.\n',
  );
  if (!yes && io.ask) {
    const refusal = await askBeforeRestore(io.ask, domain, settings.resellerBaseUrl, {
      consent: consentNeeded && !consent,
      again: resent !== undefined && !again,
    });
    if (refusal) {
      io.stdout(`not restored: ${refusal}\n`);
      return EXIT.ok;
    }
  }
  const claim = await claimRestore(trail, domain, warn);
  // Asked at the terminal, time passed: the look-up and the trail that decide are read after the claim.
  const current = yes
    ? found
    : await underClaim(claim, domain, () =>
        lookAgainAfterAsking(client, trail, domain, { again, shown: resent }, warn),
      );
  const attempt = keeper(trail, domain, now, warn);
  // Written ahead of the restore, as the restore link writes it: a command killed while the
  // reseller carries it out (SIGKILL, a closed terminal) leaves "sent, outcome unknown", not nothing.
  const sent = await restoreFromQuarantine(client, current, current.domain_name, attempt.writeAhead);
  const outcome = await settleClaim(sent, current.domain_name, claim, claim.until);
  await attempt.keep(outcome.kind, outcome.sent === true);
  // A stopped command ends on "interrupted" alone (bin/cli.ts): what the reseller may have done
  // (check the domain's status) is said before it.
  if (io.signal?.aborted && outcome.kind !== 'restored') warn(notRestoredLine(outcome));
  io.stdout(`${confirmedLine(current.domain_name, outcome)}\n`);
  return EXIT.ok;
}

/**
 * The audit trail of the state `--state` or STATE names, if any; a state file that is a directory, a
 * pipe or a device is refused before anything is sent, as a scan refuses it (not one warning per
 * write after a paid restore).
 */
async function checkedTrailOf(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  io: CliIo,
  named: StateAccount | undefined,
): Promise<AuditTrail | null> {
  const flag = str(args.values.state);
  await checkStateFileOf(flag, env, flagsOf(restore), named);
  return auditTrailFor(flag, env, io.dynamodb, flagsOf(restore), named);
}

/**
 * `step` run under the restore's claim: a refusal gives the claim up and says why nothing was sent,
 * and, when the claim could not be given up, until when it holds the domain.
 */
async function underClaim<T>(
  claim: { readonly release: () => Promise<void>; readonly until: number },
  domain: string,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const held = await claim.release().then(
      () => null,
      () => claimNotReleasedLine(domain, claim.until),
    );
    if (held && error instanceof Error) error.message = `${error.message} ${held}`;
    throw error;
  }
}

/**
 * Claims the domain's restore in the state store, as the restore link does, so a click on the
 * link at the same moment does not pay for a second restore. Refused when another restore holds
 * the claim. A state that cannot take the claim (unreadable, unreachable) is a warning: the
 * restore link refuses to restore through it too (503), so no restore of this state runs meanwhile.
 */
async function claimRestore(
  trail: AuditTrail | null,
  domain: string,
  warn: (line: string) => void,
): Promise<{ readonly release: () => Promise<void>; readonly until: number }> {
  const now = Date.now();
  const until = now + RESTORE_CLAIM_MS;
  const none = { release: async () => undefined, until };
  if (!trail) return none;
  const owner = `cli-${randomBytes(6).toString('hex')}`;
  const key = domainKey(domain);
  let claim: ClaimAnswer;
  try {
    claim = await trail.claimRestore(key, { owner, until }, now);
  } catch (error) {
    warn(`warning: the restore could not be claimed in ${trail.location}: ${(error as Error).message}`);
    return none;
  }
  if (!claim.taken)
    throw new SentinelError(
      `${domain}: a restore of it is in progress or done (claimed in ${trail.location} within the last ${RESTORE_CLAIM_MS / 60_000} minutes, and ${claimHeldLine(claim.until)}); nothing was sent. Check its status (sentinel audit, or the reseller’s control panel) before trying again`,
    );
  return { release: () => trail.releaseRestore(key, owner), until };
}

/**
 * What the trail says of a restore of `domain` sent recently (functions/core/memory/audit.ts), or
 * undefined: still in quarantine after one (queued, unknown), another may be paid twice. A trail that cannot be read is a warning, as one that cannot take the claim or the
 * write-ahead is: the restore link refuses through it (503), and the operator at the terminal is
 * told that an earlier restore could not be ruled out.
 */
async function earlierRestoreIn(
  trail: AuditTrail | null,
  domain: string,
  now: number,
  warn: (line: string) => void,
): Promise<string | undefined> {
  if (!trail) return undefined;
  try {
    const entry = earlierRestoreOf(await trail.listAudit(), domain, now);
    return entry ? earlierRestoreLine(entry, domain) : undefined;
  } catch (error) {
    warn(
      `warning: the audit trail of ${trail.location} could not be read, so a restore of ${domain} sent recently (and maybe still queued) cannot be ruled out: ${(error as Error).message}`,
    );
    return undefined;
  }
}

/**
 * After the claim, at a terminal (the questions may have waited for minutes, longer than another's
 * claim holds): the domain looked up again, and a restore of it recorded in the trail meanwhile,
 * other than the one `shown` and confirmed, refused as one read before asking is (unless `again`).
 * The restore link reads its trail under its claim.
 */
async function lookAgainAfterAsking(
  client: ResellerClient,
  trail: AuditTrail | null,
  domain: string,
  asked: { readonly again: boolean; readonly shown: string | undefined },
  warn: (line: string) => void,
): Promise<Domain> {
  const found = await findInQuarantine(client, domain);
  if (asked.again) return found;
  const resent = await earlierRestoreIn(trail, domain, Date.now(), warn);
  if (resent !== undefined && resent !== asked.shown)
    throw new SentinelError(`${resent} Nothing was sent: pass --again to send another restore`);
  return found;
}

/** Look first, as the restore endpoint does: restoring twice may be billed twice. */
async function findInQuarantine(client: ResellerClient, domain: string): Promise<Domain> {
  const found = await client.findDomain(domain).catch((error: unknown) => {
    // An answer, as the restore link words it: the API leaves unsaid whether a 404 means no hit.
    if (!(error instanceof NotFoundError)) throw error;
    throw new SentinelError(notRestoredFor404(domain), { cause: error });
  });
  if (!found) throw new SentinelError(`${domain} is not in this reseller account`);
  if (!found.status.includes('quarantine')) {
    throw new SentinelError(
      `${domain} is not in quarantine (already restored?): its status is ${found.status.join(', ') || 'unknown'}`,
    );
  }
  return found;
}

/**
 * The confirmation page's questions, at the terminal: the name typed, then (for .nl, without
 * --consent) the registrant's consent. Why it is not restored, or undefined to go ahead.
 */
async function askBeforeRestore(
  ask: NonNullable<CliIo['ask']>,
  domain: string,
  baseUrl: string,
  asks: { readonly consent: boolean; readonly again: boolean },
): Promise<string | undefined> {
  const typed = answered(domain, await ask(`Type the domain name to restore it through ${baseUrl}: `));
  if (!typedNameMatches(typed, domain)) return `the name typed is not ${domain}`;
  const yes = async (question: string) => /^y(es)?$/i.test(answered(domain, await ask(question)).trim());
  if (
    asks.consent &&
    !(await yes(
      `Did the registrant (the holder when it was cancelled) agree to this restore? The registry restores a .${tldOf(domain)} name only with the registrant’s consent. [y/N] `,
    ))
  )
    return 'the registrant’s consent was not confirmed';
  if (asks.again && !(await yes(`Send another restore of ${domain}, which may be charged again? [y/N] `)))
    return 'another restore was not confirmed (one was sent recently)';
  return undefined;
}

/**
 * An answer, or the refusal of an input that ended (Ctrl-D) before one: a question left unanswered
 * is not a "no" the command completed with, so it fails (exit 1) saying nothing was sent.
 */
function answered(domain: string, answer: string | undefined): string {
  if (answer !== undefined) return answer;
  throw new SentinelError(
    `${domain} was not restored: the input ended (Ctrl-D) before an answer; nothing was sent`,
  );
}

/**
 * Keeps an attempt in the audit trail, when the command was given a state store: written ahead of
 * the restore ({@link RESTORE_SENDING}) and its outcome over that entry after, as the restore link
 * does. A trail that cannot be written is a warning, not a refusal, as a claim that cannot be
 * taken is: the operator at the terminal reads what the reseller did (a paid restore, done) all the same.
 */
function keeper(trail: AuditTrail | null, domain: string, at: number, warn: (line: string) => void) {
  let ref: string | undefined;
  const entry = (outcome: string, sent: boolean) =>
    auditEntry({ at, domain, outcome, status: 0, via: 'cli', userAgent: 'sentinel restore', sent });
  const writeAhead = async (): Promise<void> => {
    if (!trail) return;
    try {
      ref = await trail.beginAudit(entry(RESTORE_SENDING, true));
    } catch (error) {
      warn(
        `warning: the restore could not be recorded in the audit trail of ${trail.location} before it was sent: ${(error as Error).message}`,
      );
    }
  };
  const keep = async (outcome: string, sent: boolean): Promise<void> => {
    if (!trail) return;
    try {
      if (ref === undefined) await trail.recordAudit(entry(outcome, sent));
      else await trail.completeAudit(ref, entry(outcome, sent));
    } catch (error) {
      warn(
        `warning: this attempt (${outcome}) could not be kept in the audit trail of ${trail.location}${ref === undefined ? '' : ' (it stays there as sent, outcome unknown)'}: ${(error as Error).message}`,
      );
    }
  };
  return { writeAhead, keep };
}

/**
 * What the restore came to, decided as the restore link decides it (one decision,
 * functions/core/decisions): an answer other than the documented 204, or none, is judged by a
 * fresh look-up, and the trail keeps what that found (`restored`, `outcome_unknown`, …), never a
 * bare "failed" for a restore the reseller may have carried out. Throws when it is not `restored`.
 */
function confirmedLine(domain: string, outcome: RestoreOutcome): string {
  if (outcome.kind === 'restored') {
    return outcome.detail ? `restored ${domain} (confirmed by a fresh look-up)` : `restored ${domain}`;
  }
  // The decision's own words, as the restore link's page says them; nothing of this command's to add.
  throw new SentinelError(`${notRestoredLine(outcome)}`);
}

/** What the terminal says when the outcome is not `restored`: the decision's words and their reason. */
function notRestoredLine(outcome: RestoreOutcome): string {
  // The link's page for a refused key is generic (it speaks to whoever holds a link); at the
  // terminal the operator reads the reason itself.
  // Its claim held on still says until when (the page's message carries it; the detail does not).
  if (outcome.kind === 'reseller_auth_failed')
    return [outcome.detail ?? outcome.message, outcome.detail ? outcome.claimHeld : undefined]
      .filter(Boolean)
      .join(' ');
  return `${outcome.message}${outcome.detail ? ` (${outcome.detail})` : ''}`;
}

/** The restore-by date as restore says it before it asks: days left, or that it has passed. */
export function restoreByLine(deadline: RestoreDeadline): string {
  if (!deadline.known) return `restore deadline unknown: ${deadline.reason}`;
  const by = `${deadline.restore_by.replace('T', ' ').slice(0, 16)} UTC`;
  const days = deadline.days_to_restore;
  if (days < 0) return `its restore-by date ${by} has passed: the registry may release it at any moment`;
  return `restore by ${by} (${days === 0 ? 'less than a day' : days === 1 ? '1 day' : `${days} days`} left)`;
}
