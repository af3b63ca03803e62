import { EnvSecretSource } from '../../functions/adapters/secrets';
import { SentinelError } from '../../functions/core/base/errors';
import {
  needsConsent,
  type RestoreOutcome,
  restoreFromQuarantine,
  typedNameMatches,
} from '../../functions/core/decisions/restore';
import { restoreDeadline, tldOf } from '../../functions/core/findings/quarantine-periods';
import { type AuditTrail, auditEntry } from '../../functions/core/memory/audit';
import { ResellerClient } from '../../functions/core/reseller/client';
import type { Domain } from '../../functions/core/reseller/schemas';
import { ENV } from '../../functions/core/scan/config';
import { domainArgument, flagsOf, loadSettings, str } from '../args';
import { type CliIo, EXIT, type ParsedArgs, UsageError } from '../command';
import { auditTrailFor } from '../local-stores';
import { restore } from './index';

/** `sentinel restore <domain>`: look, ask, restore, confirm. */
export async function runRestore(args: ParsedArgs, io: CliIo): Promise<number> {
  const domain = domainArgument(restore, args);
  const settings = loadSettings(restore, args, io.env, [
    'resellerBaseUrl',
    'requestTimeoutMs',
    'quarantineDays',
  ]);
  const apiKey = new EnvSecretSource(io.env).apiKeyNow();
  const env = { ...io.env, [ENV.resellerBaseUrl]: settings.resellerBaseUrl };
  const trail = auditTrailFor(str(args.values.state), env, io.dynamodb, flagsOf(restore));
  const yes = args.values.yes === true;
  const consent = args.values.consent === true;
  const consentNeeded = needsConsent(domain);
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey,
    timeoutMs: settings.requestTimeoutMs,
  });
  // Looked up first (a read, free): a domain that is not in quarantine needs no consent, and
  // saying so comes before asking for one.
  const found = await findInQuarantine(client, domain);
  if (yes && consentNeeded && !consent)
    throw new UsageError(
      `${domain}: the registry restores a .${tldOf(domain)} name only with the registrant’s consent; pass --consent with --yes once the registrant agreed`,
    );
  if (!yes && !io.ask)
    throw new UsageError(
      `not asking on a non-interactive terminal; pass --yes${consentNeeded ? ' --consent' : ''} to restore without asking`,
    );
  const now = Date.now();
  const deadline = restoreDeadline(found.domain_name, found.date_deleted, now, settings.quarantineDays);
  io.stdout(
    `${domain} is in quarantine; ${deadline.known ? `restore by ${deadline.restore_by.replace('T', ' ').slice(0, 16)} UTC (${deadline.days_to_restore} days left)` : `restore deadline unknown: ${deadline.reason}`}.\n` +
      'A restore is a paid action: the reseller charges for it, and its API does not state the price.\n',
  );
  if (!yes && io.ask) {
    const refusal = await askBeforeRestore(
      io.ask,
      domain,
      settings.resellerBaseUrl,
      consentNeeded && !consent,
    );
    if (refusal) {
      io.stdout(`not restored: ${refusal}\n`);
      return EXIT.ok;
    }
  }
  const keep = keeper(trail, domain, now, (line) => io.stderr(`${line}\n`));
  io.stdout(`${await restoreAndConfirm(client, found, keep)}\n`);
  return EXIT.ok;
}

/** Look first, as the restore endpoint does: restoring twice may be billed twice. */
async function findInQuarantine(client: ResellerClient, domain: string): Promise<Domain> {
  const found = await client.findDomain(domain);
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
  askConsent: boolean,
): Promise<string | undefined> {
  const typed = await ask(`Type the domain name to restore it through ${baseUrl}: `);
  if (!typedNameMatches(typed, domain)) return `the name typed is not ${domain}`;
  if (!askConsent) return undefined;
  const agreed = await ask(
    `Did the registrant (the holder when it was cancelled) agree to this restore? The registry restores a .${tldOf(domain)} name only with the registrant’s consent. [y/N] `,
  );
  return /^y(es)?$/i.test(agreed.trim()) ? undefined : 'the registrant’s consent was not confirmed';
}

/**
 * Keeps an attempt's outcome in the audit trail, when the command was given a state store. A trail
 * that cannot be written is a warning: what the reseller did (a paid restore, done) must still be
 * said, as the restore link's answer stands when its audit write fails.
 */
function keeper(trail: AuditTrail | null, domain: string, at: number, warn: (line: string) => void) {
  return async (outcome: string): Promise<void> => {
    if (!trail) return;
    try {
      await trail.recordAudit(
        auditEntry({ at, domain, outcome, status: 0, via: 'cli', userAgent: 'sentinel restore' }),
      );
    } catch (error) {
      warn(
        `warning: this attempt (${outcome}) could not be kept in the audit trail of ${trail.location}: ${(error as Error).message}`,
      );
    }
  };
}

/**
 * The restore, decided as the restore link decides it (one decision, functions/core/decisions):
 * an answer other than the documented 204, or none, is judged by a fresh look-up, and the trail
 * keeps what that found (`restored`, `outcome_unknown`, …), never a bare "failed" for a restore
 * the reseller may have carried out.
 */
async function restoreAndConfirm(
  client: ResellerClient,
  found: Domain,
  keep: (outcome: string) => Promise<void>,
): Promise<string> {
  const domain = found.domain_name;
  const outcome = await restoreFromQuarantine(client, found, domain);
  await keep(outcome.kind);
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
  if (outcome.kind === 'reseller_auth_failed') return `${outcome.detail ?? outcome.message}`;
  return `${outcome.message}${outcome.detail ? ` (${outcome.detail})` : ''}`;
}
