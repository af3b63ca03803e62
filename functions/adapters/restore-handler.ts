import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ENV } from '../core/config';
import {
  AuthenticationError,
  ConfigError,
  NotFoundError,
  RequestRejectedError,
  ResellerApiError,
  SecretError,
} from '../core/errors';
import { domainNameProblem, type LinkVerdict, parseSigningKeys, verifyRestoreLink } from '../core/links';
import { ResellerClient } from '../core/reseller-client';
import { renderConfirmPage, renderMessagePage, SECURITY_HEADERS } from '../core/restore-page';
import type { SecretSource } from './secrets';

/** Where the restore function finds its settings and secrets. */
export interface RestoreDeps {
  /** Read on every request, so a missing setting is a logged error page, not a crashed cold start. */
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: SecretSource;
  /** 'ssm': secret names come from *_PARAMETER variables; 'env': the secrets are the variables themselves. */
  readonly secretMode: 'ssm' | 'env';
  /** One structured line per attempt; never given a secret or a signature. */
  readonly log: (entry: RestoreLogEntry) => void;
  /** @default Date.now */
  readonly clock?: () => number;
  readonly fetch?: typeof fetch;
  /**
   * Time the reseller calls of one request may take, retries included; well inside the restore
   * Lambda's 15 s timeout, so a hung reseller gets our 502 page rather than API Gateway's bare error.
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

interface Outcome {
  readonly status: number;
  readonly outcome: string;
  readonly title: string;
  readonly message: string;
  /** For the log only: a reason an operator acts on (e.g. which parameter failed). */
  readonly detail?: string;
  readonly html?: string;
}

const GENERIC_FAILURE =
  'The restore service is not configured correctly. The operator has been told; please try again later.';

/** The restore endpoint: GET confirms, HEAD does nothing, POST restores. Shared by the Lambda and `sentinel serve`. */
export function createRestoreHandler(deps: RestoreDeps) {
  const clock = deps.clock ?? Date.now;

  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const method = event.httpMethod.toUpperCase();
    const rawDomain = event.pathParameters?.domain ?? '';
    const headers = lowerCaseKeys(event.headers);
    const wantsJson =
      /application\/json/.test(headers.accept ?? '') && !/text\/html/.test(headers.accept ?? '');

    const result = await decide(method, rawDomain, event.queryStringParameters ?? {});
    deps.log({
      domain: rawDomain.slice(0, 253),
      method,
      outcome: result.outcome,
      status: result.status,
      sourceIp: event.requestContext?.identity?.sourceIp,
      userAgent: headers['user-agent'],
      ...(result.detail ? { detail: result.detail } : {}),
    });
    return respond(method, result, wantsJson);
  };

  async function decide(
    method: string,
    domain: string,
    query: Record<string, string | undefined>,
  ): Promise<Outcome> {
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
      return {
        status: 405,
        outcome: 'method_not_allowed',
        title: 'Not allowed',
        message: 'Use the link from the alert.',
      };
    }
    const problem = domainNameProblem(domain);
    if (problem) {
      return {
        status: 400,
        outcome: 'invalid_domain',
        title: 'Not a valid domain name',
        message: `This link is not valid: ${problem}.`,
      };
    }

    let settings: { baseUrl: string; apiKeyName: string; signingKeyName: string };
    let verdict: LinkVerdict;
    try {
      settings = restoreSettings(deps.env, deps.secretMode);
      const keys = parseSigningKeys(await deps.secrets.get(settings.signingKeyName), settings.signingKeyName);
      verdict = verifyRestoreLink({ domain, token: query, keys, now: clock() });
    } catch (error) {
      return misconfigured(error);
    }
    if (!verdict.ok && verdict.reason === 'expired') {
      return {
        status: 410,
        outcome: 'link_expired',
        title: 'This link has expired',
        message: `Restore links are valid for a limited time. The next scan sends a fresh link while ${domain} is in quarantine.`,
      };
    }
    if (!verdict.ok) {
      return {
        status: 403,
        outcome: verdict.reason,
        title: 'This link is not valid',
        message:
          'The link was changed or is for another domain. Use the link from the alert exactly as sent.',
      };
    }
    if (method === 'HEAD') return { status: 200, outcome: 'head', title: '', message: '' };

    let client: ResellerClient;
    try {
      const budget = deps.resellerBudgetMs ?? 10_000;
      client = new ResellerClient({
        baseUrl: settings.baseUrl,
        apiKey: await deps.secrets.get(settings.apiKeyName),
        timeoutMs: Math.min(5_000, budget),
        deadline: Date.now() + budget,
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
      });
    } catch (error) {
      return misconfigured(error);
    }

    if (method === 'GET') {
      try {
        const found = await client.findDomain(domain);
        if (!found) {
          return {
            status: 404,
            outcome: 'not_in_account',
            title: 'Domain not found',
            message: `${domain} is not in this reseller account.`,
          };
        }
        if (!found.status.includes('quarantine')) {
          return {
            status: 200,
            outcome: 'not_in_quarantine',
            title: `${domain} is not in quarantine`,
            message: `${domain} is not in quarantine (status: ${found.status.join(', ') || 'unknown'}), so there is nothing to restore. It may have been restored already.`,
          };
        }
        const formAction = `?${new URLSearchParams({ exp: String(query.exp), kid: String(query.kid), sig: String(query.sig) })}`;
        return {
          status: 200,
          outcome: 'confirm',
          title: `Restore ${domain}?`,
          message: `${domain} is in quarantine and can be restored.`,
          html: renderConfirmPage({
            domain,
            quarantinedSince: found.date_deleted,
            linkExpires: verdict.exp * 1000,
            formAction,
          }),
        };
      } catch (error) {
        return resellerFailure(error, domain);
      }
    }

    try {
      await client.restoreDomain(domain);
      return {
        status: 200,
        outcome: 'restored',
        title: `${domain} restored`,
        message: `${domain} has been restored from quarantine.`,
      };
    } catch (error) {
      return resellerFailure(error, domain);
    }
  }
}

function restoreSettings(env: NodeJS.ProcessEnv, mode: 'ssm' | 'env') {
  const baseUrl = env[ENV.resellerBaseUrl]?.trim();
  if (!baseUrl) throw new ConfigError(`${ENV.resellerBaseUrl} is not set`);
  if (mode === 'env') return { baseUrl, apiKeyName: ENV.resellerApiKey, signingKeyName: ENV.linkSigningKey };
  const apiKeyName = env[ENV.apiKeyParameter]?.trim();
  const signingKeyName = env[ENV.linkSigningKeyParameter]?.trim();
  if (!apiKeyName) throw new ConfigError(`${ENV.apiKeyParameter} is not set`);
  if (!signingKeyName) throw new ConfigError(`${ENV.linkSigningKeyParameter} is not set`);
  return { baseUrl, apiKeyName, signingKeyName };
}

/** The caller sees a generic page; the log names what is wrong (a parameter name, never a value). */
function misconfigured(error: unknown): Outcome {
  const detail =
    error instanceof SecretError || error instanceof ConfigError ? error.message : `${(error as Error).name}`;
  return {
    status: 500,
    outcome: 'misconfigured',
    title: 'Restore unavailable',
    message: GENERIC_FAILURE,
    detail,
  };
}

function resellerFailure(error: unknown, domain: string): Outcome {
  if (error instanceof RequestRejectedError || error instanceof NotFoundError) {
    const said = error.bodyExcerpt ? ` It said: ${error.bodyExcerpt.slice(0, 160)}` : '';
    return {
      status: 409,
      outcome: 'refused',
      title: `${domain} was not restored`,
      message: `The reseller refused to restore ${domain} (HTTP ${error.status}); it may not be in quarantine any more.${said}`,
      detail: error.message,
    };
  }
  if (error instanceof AuthenticationError) {
    return {
      status: 502,
      outcome: 'reseller_auth_failed',
      title: 'Restore unavailable',
      message: GENERIC_FAILURE,
      detail: error.message,
    };
  }
  const detail = error instanceof ResellerApiError ? error.message : (error as Error).message;
  return {
    status: 502,
    outcome: 'reseller_unreachable',
    title: 'The reseller could not be reached',
    message: `${domain} was not restored: the reseller's API did not answer. Please try again in a few minutes.`,
    detail,
  };
}

function respond(method: string, result: Outcome, wantsJson: boolean): APIGatewayProxyResult {
  const headers: Record<string, string> = { ...SECURITY_HEADERS };
  if (result.status === 405) headers.Allow = 'GET, HEAD, POST';
  if (method === 'HEAD')
    return {
      statusCode: result.status,
      headers: { ...headers, 'Content-Type': 'text/html; charset=utf-8' },
      body: '',
    };
  if (wantsJson) {
    return {
      statusCode: result.status,
      headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ outcome: result.outcome, message: result.message }),
    };
  }
  const ok = result.status < 300;
  return {
    statusCode: result.status,
    headers: { ...headers, 'Content-Type': 'text/html; charset=utf-8' },
    body: result.html ?? renderMessagePage({ title: result.title, message: result.message, ok }),
  };
}

function lowerCaseKeys(
  headers: APIGatewayProxyEvent['headers'] | null | undefined,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(headers ?? {})) out[key.toLowerCase()] = value;
  return out;
}
