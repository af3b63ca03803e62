import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { loadRestoreSettings, type RawSettings } from '../core/config';
import { ResellerClient } from '../core/reseller-client';
import { decideRestore, type RestoreOutcome, type RestorePort } from '../core/restore';
import { renderConfirmPage, renderMessagePage } from '../core/restore-page';
import type { SecretSource } from '../core/secrets';
import { normalizeDomainName } from '../core/text';
import { answer, lowerCaseKeys, requestLogFields, wantsJson } from './http-answer';

/**
 * The HTTP mapping of the restore decision (functions/core/restore.ts): an API Gateway proxy event
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
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const method = event.httpMethod.toUpperCase();
    const domain = event.pathParameters?.domain ?? '';
    const headers = lowerCaseKeys(event.headers);

    const outcome = await decideRestore({
      method,
      domain,
      token: event.queryStringParameters ?? {},
      now: clock(),
      signingKeys: () => deps.secrets.signingKeys(),
      reseller: () => resellerPort(deps),
    });
    deps.log({
      ...requestLogFields(event, headers, method, domain),
      outcome: outcome.kind,
      status: outcome.status,
      ...(outcome.detail ? { detail: outcome.detail } : {}),
    });
    return respond(method, domain, outcome, wantsJson(headers));
  };
}

/** The reseller as the decision sees it, built per request with a bounded time for its calls. */
async function resellerPort(deps: RestoreDeps): Promise<RestorePort> {
  const settings = loadRestoreSettings(deps.settings());
  const budget = deps.resellerBudgetMs ?? 10_000;
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey: await deps.secrets.apiKey(),
    timeoutMs: Math.min(5_000, budget),
    deadline: Date.now() + budget,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  return {
    // Links carry the normalised name; the account may hold the name in another form (upper case,
    // Unicode, a trailing dot), so the match is on the normalised form and restore uses the
    // account's own spelling.
    findDomain: async (name) => {
      const wanted = normalizeDomainName(name);
      for await (const page of client.listDomains({ domain_name: name })) {
        const match = page.records.find((d) => normalizeDomainName(d.domain_name) === wanted);
        if (match) return match;
      }
      return null;
    },
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
