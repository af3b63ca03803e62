import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { failedForNow } from '../core/base/errors';
import { decideView } from '../core/decisions/view-decision';
import { type SigningKey, signLinkQuery } from '../core/links/links';
import type { SecretSource } from '../core/links/secrets';
import type { ActionStore } from '../core/memory/actions';
import type { AuditTrail } from '../core/memory/audit';
import type { ReportStore } from '../core/memory/report-store';
import { OVERVIEW_PAGE_HEADERS, type OverviewLine, renderOverviewPage } from '../core/pages/overview-page';
import { renderMessagePage, SECURITY_HEADERS } from '../core/pages/restore-page';
import {
  ACCOUNT_NAME,
  type AccountScanInput,
  type AccountSummaryStore,
  accountRawSettings,
  accountScope,
  accountSecrets,
  accountSigningKeys,
  overviewSigningKeys,
} from '../core/scan/accounts';
import { parseSetting, settingsFromEnv } from '../core/scan/config';
import { type ProxyHandler, refusalAnswer } from './http-answer';
import { createWebApp } from './web-app';

/**
 * The web surface of several accounts: every link of an account lives under
 * `/accounts/<name>/` (its report page, calendar feed, restore, snooze and acknowledge links), is
 * signed with the account's own derived key and served by an app with the account's own settings,
 * key, state and report; `/accounts` is the overview of every account. Anything else is the
 * deployment's own app.
 */

/** The API's resources for several accounts, as API Gateway names them in `event.resource`. */
export const ACCOUNT_WEB_RESOURCES = {
  overview: '/accounts',
  /** Before each of the app's own resources (WEB_RESOURCES): `/accounts/{account}/report`, … */
  prefix: '/accounts/{account}',
} as const;

/** What the web surface knows of an account: its name and its own settings (and, in AWS, its key's parameter). */
export type AccountEntry = Pick<AccountScanInput, 'account' | 'settings'>;

export interface AccountsWebDeps<A extends AccountEntry = AccountScanInput> {
  /** The deployment's accounts; null when it has none. */
  readonly directory: () => Promise<{ readonly accounts: readonly A[] } | null>;
  /** The web app of one account: its own settings, key, state and report (built once per account and input). */
  readonly appFor: (input: A) => ProxyHandler;
  /** Where the overview reads each account's last completed scan. */
  readonly summaries: () => AccountSummaryStore | null;
  /** The deployment's signing keys; each account's and the overview's are derived from them. */
  readonly signingKeys: () => Promise<readonly SigningKey[]>;
  /** The deployment's own routes (`/restore/{domain}`, `/report`, …). */
  readonly fallback: ProxyHandler;
  readonly log: (message: string, entry: Record<string, unknown>) => void;
  /** @default Date.now */
  readonly clock?: () => number;
}

const page = (status: number, title: string, message: string, method: string): APIGatewayProxyResult => ({
  statusCode: status,
  // A 405 names what is allowed (RFC 9110 15.5.6), as every link's own answers do.
  headers: {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    ...(status === 405 ? { Allow: 'GET, HEAD' } : {}),
  },
  body: method === 'HEAD' ? '' : renderMessagePage({ title, message, ok: status < 300 }),
});

/** A refusal on one account's route: an acting link's program asks for JSON and gets it. */
const refuse = (
  outcome: string,
  status: number,
  title: string,
  message: string,
  event: APIGatewayProxyEvent,
) => refusalAnswer({ method: event.httpMethod, headers: event.headers, status, outcome, title, message });

/** Every route of several accounts in front of the deployment's own. */
export function createAccountsWebApp<A extends AccountEntry>(given: AccountsWebDeps<A>): ProxyHandler {
  // An answer of 500 or more is logged at error level, as every link's own answers are (web-app.ts).
  const deps: AccountsWebDeps<A> = {
    ...given,
    log: (message, entry) =>
      given.log(message, { level: Number(entry.status) >= 500 ? 'error' : 'info', ...entry }),
  };
  const clock = deps.clock ?? Date.now;
  const apps = new Map<string, ProxyHandler>();
  const appOf = (input: A) => {
    // Keyed by the whole input: a deploy that changes an account's settings gets a new app.
    const key = JSON.stringify(input);
    const app = apps.get(key) ?? deps.appFor(input);
    apps.set(key, app);
    return app;
  };

  return async (event) => {
    if (event.resource === ACCOUNT_WEB_RESOURCES.overview) return overview(deps, clock(), event);
    if (!event.resource.startsWith(`${ACCOUNT_WEB_RESOURCES.prefix}/`)) return deps.fallback(event);
    const { account: name = '', ...rest } = event.pathParameters ?? {};
    let directory: { readonly accounts: readonly A[] } | null;
    try {
      directory = ACCOUNT_NAME.test(name) ? await deps.directory() : null;
    } catch (error) {
      // S3 down, slow or unreachable is worth trying again; a refused read (the role's policy) or
      // what was read being no directory (missing, not JSON) waits for the operator.
      const transient = failedForNow(error);
      const [outcome, status] = transient ? ['store_failed', 503] : ['misconfigured', 500];
      deps.log('account link', { outcome, status, detail: (error as Error).message });
      return transient
        ? refuse(
            outcome,
            status,
            'Unavailable',
            'The accounts could not be read. Please try again in a few minutes.',
            event,
          )
        : refuse(
            outcome,
            status,
            'Unavailable',
            'This service is not configured correctly. The operator has been told; please try again later.',
            event,
          );
    }
    const input = directory?.accounts.find((a) => a.account === name);
    // An account that is not (or no longer) one of the deployment's is answered by the app of a
    // name no account can have: its every check (method, domain, key id, signature) answers as an
    // account's would, and no link passes its signature, so whether a name is an account is not
    // told to whoever guesses names, nor does a gone account's link reach anything.
    const ghost = directory?.accounts[0];
    if (!input && ghost) {
      deps.log('account link', { outcome: 'unknown_account', status: 403 });
      return appOf({ ...ghost, account: NO_ACCOUNT })(accountEvent(event, rest));
    }
    if (!input) {
      deps.log('account link', { outcome: 'unknown_account', status: 403 });
      return refuse(
        // The outcome a changed link's signature gets: an account name is not told apart.
        'bad_signature',
        403,
        'This link is not valid',
        'The link was changed, or is for something else. Use the link from the alert exactly as sent.',
        event,
      );
    }
    return appOf(input)(accountEvent(event, rest));
  };
}

/** What a link of the deployment's own routes is told once the deployment serves several accounts. */
export const RETIRED_LINK = {
  title: 'This link is no longer served',
  message:
    'This deployment now serves several accounts, each with links of its own; this link is from before, and what it was for is no longer kept here. Nothing was changed. Use the links of the latest alert.',
} as const;

/**
 * The deployment's own routes (`/restore/{domain}`, `/report`, …) in AWS once it serves several
 * accounts: every link there is from before the switch. Its state, report and key are no
 * account's, and the web function's role may no longer use them (the state table in the accounts'
 * partitions alone, the bucket's accounts' reports), so the deployment's own app would answer a 500
 * "not configured correctly" or a 503 "try again", raising the error alarm for an old e-mail's
 * click. Each is answered 410 instead, saying so, without reading anything.
 */
export function retiredRoutes(log: (message: string, entry: Record<string, unknown>) => void): ProxyHandler {
  return async (event) => {
    // The route's own word (restore, snooze, report, …), from the API's resource, never the request's text.
    const action = /^\/([a-z.]{1,16})/.exec(event.resource)?.[1] ?? 'unknown';
    log('retired link', { level: 'info', action, outcome: 'link_retired', status: 410 });
    return refuse('link_retired', 410, RETIRED_LINK.title, RETIRED_LINK.message, event);
  };
}

/**
 * The name of the app that answers for an account that is not one: outside ACCOUNT_NAME, so no
 * account has it and no link is signed with its derived keys.
 */
const NO_ACCOUNT = '(no account)';

/** The event as an account's own app sees it: its resource without the account's prefix. */
const accountEvent = (event: APIGatewayProxyEvent, rest: Record<string, string | undefined>) => ({
  ...event,
  resource: event.resource.slice(ACCOUNT_WEB_RESOURCES.prefix.length),
  pathParameters: Object.keys(rest).length ? (rest as Record<string, string>) : null,
});

/**
 * The overview of every account: behind the report link's own checks (method, signature, expiry)
 * with the overview's keys, each account's line with its report linked.
 */
async function overview<A extends AccountEntry>(
  deps: AccountsWebDeps<A>,
  now: number,
  event: APIGatewayProxyEvent,
): Promise<APIGatewayProxyResult> {
  const method = event.httpMethod.toUpperCase();
  const token = event.queryStringParameters ?? {};
  const keys = async () => overviewSigningKeys(await deps.signingKeys());
  // The report link's own checks (method, signature, expiry) with the overview's keys; its
  // "no report yet" is the one outcome that means the link is good.
  const gate = await decideView({
    action: 'report',
    method,
    token,
    now,
    signingKeys: keys,
    latestReport: async () => null,
  });
  let result: APIGatewayProxyResult;
  let outcome: string = gate.kind;
  if (gate.kind === 'no_report') {
    try {
      const lines = await overviewLines(deps, Number(token.exp) - Math.floor(now / 1000), now);
      outcome = 'show';
      result = {
        statusCode: 200,
        headers: { ...OVERVIEW_PAGE_HEADERS, 'Content-Type': 'text/html; charset=utf-8' },
        body: method === 'HEAD' ? '' : renderOverviewPage(lines),
      };
    } catch (error) {
      outcome = 'store_failed';
      deps.log('overview view', {
        action: 'overview',
        outcome,
        status: 503,
        detail: (error as Error).message,
      });
      return page(
        503,
        'Unavailable',
        'The accounts could not be read. Please try again in a few minutes.',
        method,
      );
    }
  } else if (gate.kind === 'show') {
    // Never: the overview's gate has no report to show.
    result = page(500, 'Unavailable', 'Please try again later.', method);
  } else {
    result = page(gate.status, gate.title, gate.message, method);
  }
  deps.log('overview view', {
    action: 'overview',
    method: method.slice(0, 16),
    outcome,
    status: result.statusCode,
    sourceIp: event.requestContext?.identity?.sourceIp,
  });
  return result;
}

/** Each account's line, its report linked with a signature of its own that lasts as long as the overview's. */
async function overviewLines<A extends AccountEntry>(
  deps: AccountsWebDeps<A>,
  ttlSeconds: number,
  now: number,
): Promise<OverviewLine[]> {
  const directory = (await deps.directory()) ?? { accounts: [] };
  const keys = await deps.signingKeys();
  const summaries = deps.summaries();
  return Promise.all(
    directory.accounts.map(async (input) => {
      let summary: OverviewLine['summary'] = null;
      try {
        summary = (await summaries?.get(input.account)) ?? null;
      } catch {
        summary = 'unreadable';
      }
      const query = signLinkQuery({
        action: 'report',
        keys: accountSigningKeys(keys, input.account),
        now,
        ttlSeconds: Math.max(1, ttlSeconds),
      });
      const label = input.settings.accountLabel;
      return {
        account: input.account,
        ...(typeof label === 'string' ? { label } : {}),
        summary,
        reportHref: `accounts/${input.account}/report?${query}`,
      };
    }),
  );
}

/** Where one account's web app finds what is its own, given the account's state scope. */
export interface AccountWebStores<A extends AccountEntry = AccountScanInput> {
  readonly env: NodeJS.ProcessEnv;
  /** The source of the account's own API key (its parameter, or its variable); signing keys the deployment's. */
  readonly secrets: (input: A) => SecretSource;
  readonly actions: (scope: string, secrets: SecretSource) => ActionStore | null;
  readonly reports: (account: string) => ReportStore | null;
  readonly audit: (scope: string) => AuditTrail | null;
  readonly log: (message: string, entry: Record<string, unknown>) => void;
  readonly clock?: () => number;
  readonly fetch?: typeof fetch;
}

/**
 * The web app of one account of several: the deployment's settings with the account's own over
 * them, its own key for restores, links checked with its own derived keys, and its own state (the
 * scope of its name at its reseller) and report. Every log line names the account.
 */
export function accountWebApp<A extends AccountEntry>(input: A, stores: AccountWebStores<A>): ProxyHandler {
  const settings = () => accountRawSettings(settingsFromEnv(stores.env), input);
  const scope = () =>
    accountScope(parseSetting('resellerBaseUrl', settings().resellerBaseUrl), input.account);
  const secrets = accountSecrets(stores.secrets(input), input.account);
  return createWebApp({
    settings,
    secrets,
    actions: () => stores.actions(scope(), secrets),
    reports: () => stores.reports(input.account),
    audit: () => stores.audit(scope()),
    log: (message, entry) => stores.log(message, { ...entry, account: input.account }),
    ...(stores.clock ? { clock: stores.clock } : {}),
    ...(stores.fetch ? { fetch: stores.fetch } : {}),
  });
}
