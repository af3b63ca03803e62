import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { errorLine } from '../core/base/errors';
import { decideRestore, type RestoreOutcome, type RestorePort } from '../core/decisions/restore';
import type { ClaimPort } from '../core/decisions/restore-claim';
import type { QuarantineOverrides } from '../core/findings/quarantine-periods';
import type { SecretSource } from '../core/links/secrets';
import {
  type AuditTrail,
  auditEntry,
  MemoryRestoreClaims,
  RESTORE_CLAIM_MS,
  RESTORE_SENDING,
} from '../core/memory/audit';
import { domainKey } from '../core/memory/state-bounds';
import { renderConfirmPage, renderMessagePage } from '../core/pages/restore-page';
import { ResellerClient } from '../core/reseller/client';
import { loadRestoreSettings, METRICS, parseSetting, type RawSettings } from '../core/scan/config';
import { answer, lowerCaseKeys, parseFormBody, requestLogFields, wantsJson } from './http-answer';

/**
 * The HTTP mapping of the restore decision (functions/core/decisions/restore.ts): an API Gateway proxy event
 * in, a page or JSON out. Shared by the restore Lambda and `sentinel serve`.
 */

export interface RestoreDeps {
  /** Read on every request, so a missing setting is a logged error page, not a crashed cold start. */
  readonly settings: () => RawSettings;
  readonly secrets: SecretSource;
  /** One structured line per attempt; never given a secret or a signature. */
  readonly log: (entry: RestoreLogEntry) => void;
  /** @default Date.now */
  readonly clock?: () => number;
  readonly fetch?: typeof fetch;
  /**
   * Time the reseller calls of one request may take, retries included; well inside the restore
   * Lambda's 15 s timeout, so a hung reseller gets our own page rather than API Gateway's bare error.
   * @default 10 000 ms
   */
  readonly resellerBudgetMs?: number;
  /**
   * Where every restore attempt (a POST on a valid link) and its outcome is kept, and where a
   * restore claims its domain first: the state store. Absent or null, attempts are only logged and
   * claims are kept in this process.
   */
  readonly audit?: () => AuditTrail | null | Promise<AuditTrail | null>;
}

export interface RestoreLogEntry {
  readonly domain: string;
  readonly method: string;
  readonly outcome: string;
  readonly status: number;
  readonly sourceIp: string | undefined;
  readonly userAgent: string | undefined;
  readonly detail?: string;
}

/** The restore endpoint: GET confirms, HEAD does nothing, POST restores. */
export function createRestoreHandler(deps: RestoreDeps) {
  const clock = deps.clock ?? Date.now;
  const local = new MemoryRestoreClaims();
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const method = event.httpMethod.toUpperCase();
    const domain = event.pathParameters?.domain ?? '';
    const headers = lowerCaseKeys(event.headers);

    const token = event.queryStringParameters ?? {};
    const now = clock();
    // A body that cannot be a form is refused before anything else is looked at, as a snooze's is:
    // nothing is called, and it is no attempt (the link is not even checked).
    const read =
      method === 'POST' ? parseFormBody(event, headers['content-type']) : { ok: true as const, form: {} };
    const request = requestLogFields(event, headers, method, domain);
    const attempt = attemptKeeper(deps, request, token, now);
    const outcome: RestoreOutcome = read.ok
      ? await decideRestore({
          method,
          domain,
          token,
          now,
          signingKeys: () => deps.secrets.signingKeys(),
          reseller: () => resellerPort(deps),
          form: read.form,
          quarantineDays: quarantineDaysOf(deps),
          claim: claimOf(deps, local, domain, clock),
          writeAhead: attempt.writeAhead,
          earlierRestores: async () => (await deps.audit?.())?.listAudit() ?? null,
        })
      : { kind: 'bad_form', status: read.status, title: read.title, message: read.message };
    deps.log({
      ...request,
      outcome: outcome.kind,
      status: outcome.status,
      ...(outcome.detail ? { detail: outcome.detail } : {}),
    });
    if (outcome.attempt) await attempt.keep(outcome);
    return respond(method, domain, outcome, wantsJson(headers));
  };
}

/**
 * Keeps one request's restore attempt in the audit trail. A restore about to be sent is written
 * ahead ({@link RESTORE_SENDING}; a throw there sends nothing), and its outcome over it after: one
 * entry per attempt, and a function that dies between the two (timeout, out of memory) leaves
 * "sent, outcome unknown" rather than nothing. Any other attempt is kept once, with its outcome.
 * The restore's outcome stands whatever happens to the outcome's write: a domain restored must not
 * be reported as failed because the trail could not be written, so a failure is logged (at error
 * level: status 500) with the attempt it could not keep.
 */
function attemptKeeper(
  deps: RestoreDeps,
  request: ReturnType<typeof requestLogFields>,
  token: Readonly<Record<string, string | undefined>>,
  now: number,
) {
  let ahead: { readonly trail: AuditTrail; readonly ref: string } | undefined;
  const entry = (outcome: string, status: number, sent: boolean) =>
    auditEntry({
      at: now,
      domain: request.domain,
      outcome,
      status,
      via: 'web',
      keyId: token.kid ?? null,
      clientIp: request.sourceIp ?? null,
      userAgent: request.userAgent ?? null,
      sent,
      linkExpires: Number(token.exp),
    });
  const writeAhead = async (): Promise<void> => {
    const trail = await deps.audit?.();
    if (trail) ahead = { trail, ref: await trail.beginAudit(entry(RESTORE_SENDING, 0, true)) };
  };
  const keep = async (outcome: RestoreOutcome): Promise<void> => {
    try {
      const kept = entry(outcome.kind, outcome.status, outcome.sent === true);
      if (ahead) return await ahead.trail.completeAudit(ahead.ref, kept);
      const trail = await deps.audit?.();
      if (trail) await trail.recordAudit(kept);
    } catch (error) {
      deps.log({
        ...request,
        outcome: METRICS.auditFailedOutcome,
        status: 500,
        detail: `the restore attempt (${outcome.kind}, HTTP ${outcome.status}) could not be kept in the audit trail${ahead ? ' (it stays there as sent, outcome unknown)' : ''}: ${errorLine(error)}`,
      });
    }
  };
  return { writeAhead, keep };
}

/** The request's claim on its domain: in the state store when there is one, else in this process. */
function claimOf(
  deps: RestoreDeps,
  local: MemoryRestoreClaims,
  domain: string,
  clock: () => number,
): ClaimPort {
  const owner = `web-${randomBytes(6).toString('hex')}`;
  const name = domainKey(domain);
  const store = async () => (await deps.audit?.()) ?? local;
  return {
    take: async () => {
      const now = clock();
      return (await store()).claimRestore(name, { owner, until: now + RESTORE_CLAIM_MS }, now);
    },
    release: async () => (await store()).releaseRestore(name, owner),
  };
}

/** QUARANTINE_DAYS for the confirmation page's restore-by date; a bad value shows it as unknown rather than block a restore. */
function quarantineDaysOf(deps: RestoreDeps): QuarantineOverrides | undefined {
  try {
    return parseSetting('quarantineDays', deps.settings().quarantineDays);
  } catch {
    return undefined;
  }
}

/** The time a link's calls to the reseller may take in all (restore, snooze, acknowledge). */
export const RESELLER_BUDGET_MS = 10_000;

/** The reseller as the decision sees it, built per request with a bounded time for its calls. */
async function resellerPort(deps: RestoreDeps): Promise<RestorePort> {
  const settings = loadRestoreSettings(deps.settings());
  const budget = deps.resellerBudgetMs ?? RESELLER_BUDGET_MS;
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey: await deps.secrets.apiKey(),
    timeoutMs: Math.min(5_000, budget),
    deadline: Date.now() + budget,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  return {
    // Links carry the normalised name; the account may hold the name in another form (upper case,
    // Unicode, a trailing dot): findDomain searches each spelling and matches on the normalised
    // form, and restore uses the account's own spelling.
    findDomain: (name) => client.findDomain(name),
    restoreDomain: (name) => client.restoreDomain(name),
  };
}

function respond(
  method: string,
  domain: string,
  outcome: RestoreOutcome,
  json: boolean,
): APIGatewayProxyResult {
  return answer({
    method,
    status: outcome.status,
    json,
    jsonBody: () => ({ outcome: outcome.kind, message: outcome.message }),
    page: () =>
      outcome.confirm
        ? renderConfirmPage({ domain, ...outcome.confirm })
        : renderMessagePage({ title: outcome.title, message: outcome.message, ok: outcome.status < 300 }),
  });
}
