import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { safeText } from '../core/base/text';
import { renderMessagePage, SECURITY_HEADERS } from '../core/pages/restore-page';

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

/**
 * A program that prefers JSON to HTML gets `{outcome, message, …}` instead of a page: the quality
 * each gets from its most specific media range (RFC 9110 12.5.1); on a tie, JSON only where it is
 * named and HTML is not (`application/json, *\/*`). Media types ignore case (RFC 9110 8.3.1).
 */
export const wantsJson = (headers: Record<string, string | undefined>): boolean => {
  const accept = headers.accept ?? '';
  const json = quality(accept, 'application', 'json');
  const html = quality(accept, 'text', 'html');
  return json.q > 0 && (json.q > html.q || (json.q === html.q && json.specificity > html.specificity));
};

/** The quality `accept` gives `type/subtype`: that of its most specific matching range, 0 if none (or unreadable). */
function quality(accept: string, type: string, subtype: string): { q: number; specificity: number } {
  let found = 0;
  let specificity = -1;
  for (const range of accept.toLowerCase().split(',')) {
    const [media = '', ...params] = range.split(';').map((part) => part.trim());
    const [t, s] = media.split('/');
    const level =
      t === type && s === subtype ? 2 : t === type && s === '*' ? 1 : t === '*' && s === '*' ? 0 : -1;
    if (level <= specificity) continue;
    const q = params.find((p) => /^q\s*=/.test(p))?.replace(/^q\s*=\s*/, '');
    specificity = level;
    found = q === undefined ? 1 : /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(q) ? Number(q) : 0;
  }
  return { q: found, specificity };
}

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
 * A refusal made before any link's own handler runs (no such route, no such account, a body too
 * large for `sentinel serve`): the message page, or `{outcome, message}` to a program that asks
 * for JSON, as every link's own answers are.
 */
export function refusalAnswer(options: {
  readonly method: string;
  readonly headers: APIGatewayProxyEvent['headers'] | null | undefined;
  readonly status: number;
  readonly outcome: string;
  readonly title: string;
  readonly message: string;
}): APIGatewayProxyResult {
  return answer({
    method: options.method.toUpperCase(),
    status: options.status,
    json: wantsJson(lowerCaseKeys(options.headers)),
    jsonBody: () => ({ outcome: options.outcome, message: options.message }),
    page: () =>
      renderMessagePage({ title: options.title, message: options.message, ok: options.status < 300 }),
  });
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

/** The type a page's form is posted in. */
const FORM_TYPE = 'application/x-www-form-urlencoded';

const JSON_TYPE = 'application/json';

/**
 * A urlencoded form's fields; one given twice is refused: no page's form names a field twice, and
 * which of the two acts would be this parser's choice, not the sender's (nor what a proxy or log read).
 */
function formOf(fields: URLSearchParams): FormRead {
  return givenTwice(fields.keys()) ?? { ok: true, form: Object.fromEntries(fields) };
}

/** The refusal of a form (urlencoded or JSON) naming a field twice; null when each is named once. */
function givenTwice(names: Iterable<string>): FormRead | null {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name))
      return {
        ok: false,
        status: 400,
        title: 'A field is given twice',
        message: `The form gives ${safeText(name.slice(0, 40))} twice; send each field once (as the page does). Nothing was changed.`,
      };
    seen.add(name);
  }
  return null;
}

/**
 * The names of a JSON object's own members, in order and with repeats (JSON.parse keeps only the
 * last of a name given twice, where another reader may keep the first), from `text` that parsed
 * as an object: one pass, strings skipped whole, members of nested values left out.
 */
function jsonMemberNames(text: string): string[] {
  const names: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let next = end + 1;
      while (next < text.length && ' \t\n\r'.includes(text[next] ?? '')) next++;
      if (depth === 1 && text[next] === ':') names.push(JSON.parse(text.slice(i, end + 1)) as string);
      i = end;
    }
  }
  return names;
}

/** The most a POSTed form may be: no confirmation form comes near it. */
export const MAX_FORM_CHARS = 16_384;

/** A POSTed form, values as strings, or why its body is refused (a page's title and text). */
export type FormRead =
  | { readonly ok: true; readonly form: Record<string, string> }
  | {
      readonly ok: false;
      readonly status: 400 | 413 | 415;
      readonly title: string;
      readonly message: string;
    };

const TOO_LARGE = {
  ok: false,
  status: 413,
  title: 'The form is too large',
  message: `The body is larger than ${MAX_FORM_CHARS} characters, the most a form may be (a confirmation form is a few dozen). Nothing was changed.`,
} as const;

/**
 * The form of a POST: urlencoded (a page's form) or a JSON object (programs), values as strings.
 * A body over {@link MAX_FORM_CHARS}, JSON that does not parse, and JSON that is not an object are
 * refused, each said so; an empty body is an empty form.
 */
export function parseFormBody(event: APIGatewayProxyEvent, contentType: string | undefined): FormRead {
  if (!event.body) return { ok: true, form: {} };
  // Measured before decoding: base64 takes 4 characters for every 3.
  if (event.body.length > (event.isBase64Encoded ? (MAX_FORM_CHARS * 4) / 3 + 4 : MAX_FORM_CHARS))
    return TOO_LARGE;
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  // No type named is read as a page's form (what `curl -d` sends); any other type (multipart, as
  // `curl -F` sends, or plain text) would be read as one and found without its fields: a 422 that
  // says to type the name the caller did type.
  if (media !== '' && media !== FORM_TYPE && media !== JSON_TYPE)
    return {
      ok: false,
      status: 415,
      title: 'The form is not in a type this link reads',
      message: `The body is ${safeText(media.slice(0, 80))}; send the fields as ${FORM_TYPE} (as the page does) or as application/json. Nothing was changed.`,
    };
  if (media !== JSON_TYPE) return formOf(new URLSearchParams(text));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      status: 400,
      title: 'The form is not JSON',
      // The parser's own words say where (a position), and quote at most a little of the caller's own body.
      message: `The body is labelled application/json but is not JSON (${safeText((error as Error).message.slice(0, 120))}): send an object such as {"days": 7}. Nothing was changed.`,
    };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return {
      ok: false,
      status: 400,
      title: 'The form is not a JSON object',
      message: `The JSON body is ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`}, not an object: send an object such as {"days": 7}. Nothing was changed.`,
    };
  return (
    givenTwice(jsonMemberNames(text)) ?? {
      ok: true,
      form: Object.fromEntries(
        Object.entries(parsed).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
      ),
    }
  );
}
