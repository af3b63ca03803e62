import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { safeText } from '../core/base/text';
import { SECURITY_HEADERS } from '../core/pages/restore-page';

/** The HTTP side every acting link shares: which form the caller wants, and the answer in it. */

/** The Lambda's handler shape: the web Lambda and `sentinel serve` both run one. */
export type ProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** Request headers by lower-case name (API Gateway keeps the client's spelling). */
export function lowerCaseKeys(
  headers: APIGatewayProxyEvent['headers'] | null | undefined,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(headers ?? {})) out[key.toLowerCase()] = value;
  return out;
}

/** A program that asks for JSON (and not HTML) gets `{outcome, message, …}` instead of a page. */
export const wantsJson = (headers: Record<string, string | undefined>): boolean => {
  const accept = headers.accept ?? '';
  return /application\/json/.test(accept) && !/text\/html/.test(accept);
};

/**
 * An outcome as HTTP: headers only for HEAD, JSON for programs, else the page; every answer with
 * the security headers, and `Allow` on a 405.
 */
export function answer(options: {
  readonly method: string;
  readonly status: number;
  readonly json: boolean;
  readonly jsonBody: () => Record<string, unknown>;
  readonly page: () => string;
}): APIGatewayProxyResult {
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    // HEAD answers the header fields GET would (RFC 9110 9.3.2), the JSON one for a program too.
    'Content-Type': options.json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
  };
  if (options.status === 405) headers.Allow = 'GET, HEAD, POST';
  const body =
    options.method === 'HEAD' ? '' : options.json ? JSON.stringify(options.jsonBody()) : options.page();
  return { statusCode: options.status, headers, body };
}

/**
 * What every acting link logs about the request: made safe and cut (the path and headers are the
 * caller's text), never the query string, which holds the signature.
 */
export function requestLogFields(
  event: APIGatewayProxyEvent,
  headers: Record<string, string | undefined>,
  method: string,
  domain: string,
) {
  const userAgent = headers['user-agent'];
  return {
    domain: safeText(domain.slice(0, 253)),
    method: safeText(method.slice(0, 16)),
    sourceIp: event.requestContext?.identity?.sourceIp,
    userAgent: userAgent === undefined ? undefined : safeText(userAgent.slice(0, 300)),
  };
}

/** A form larger than this is read as empty: no confirmation form comes near it. */
export const MAX_FORM_CHARS = 16_384;

/**
 * The form of a POST: urlencoded (a page's form) or a JSON object (programs), values as strings;
 * anything else, or anything too large, is an empty form.
 */
export function readForm(
  event: APIGatewayProxyEvent,
  contentType: string | undefined,
): Record<string, string> {
  if (
    !event.body ||
    event.body.length > (event.isBase64Encoded ? (MAX_FORM_CHARS * 4) / 3 + 4 : MAX_FORM_CHARS)
  )
    return {};
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (/application\/json/i.test(contentType ?? '')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        return Object.fromEntries(
          Object.entries(parsed).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
        );
    } catch {
      // Not JSON: no form at all, so nothing is confirmed.
    }
    return {};
  }
  return Object.fromEntries(new URLSearchParams(text));
}
