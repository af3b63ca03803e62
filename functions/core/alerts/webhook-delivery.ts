import { ConfigError } from '../base/errors';
import { parseRetryAfter } from '../base/retry';
import { secretUrlText } from '../base/text';
import { isLoopbackUrl, WEBHOOK_FORMATS, type WebhookFormat } from '../scan/config';

/**
 * Which webhooks a deployment posts to, and what an answer means: the decisions of the webhook
 * subscriber without its I/O (functions/use-cases/webhook-post.ts does the posting).
 */

/** One webhook as the stack configures it: its format and the SSM SecureString holding its URL. */
export interface WebhookSpec {
  readonly format: WebhookFormat;
  readonly parameter: string;
}

/** One webhook as the subscriber function knows it: its spec and the queue its alerts arrive on. */
export interface WebhookTarget extends WebhookSpec {
  /** ARN of the SQS queue subscribed to the alert topic for this webhook alone. */
  readonly queue: string;
}

const PARAMETER = /^\/[A-Za-z0-9_.\-/]{1,1010}$/;

/** `slack:/domain-sentinel/slack-webhook` → `{ format: 'slack', parameter: '/domain-sentinel/slack-webhook' }`. */
export function parseWebhookSpec(text: string): WebhookSpec {
  const at = text.indexOf(':');
  const format = text.slice(0, at).trim();
  const parameter = text.slice(at + 1).trim();
  if (at < 0 || !(WEBHOOK_FORMATS as readonly string[]).includes(format) || !PARAMETER.test(parameter))
    throw new ConfigError(
      `webhook ${JSON.stringify(text.slice(0, 80))} must be FORMAT:/ssm/parameter/name with FORMAT one of ${WEBHOOK_FORMATS.join(', ')}, e.g. slack:/domain-sentinel/slack-webhook`,
    );
  return { format: format as WebhookFormat, parameter };
}

/** WEBHOOK_TARGETS as the stack writes it (JSON); a ConfigError names what is wrong. */
export function parseWebhookTargets(text: string | undefined, variable: string): WebhookTarget[] {
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch {
    throw new ConfigError(
      `${variable} is not set or not JSON (the stack sets it to the webhooks and their queues)`,
    );
  }
  if (!Array.isArray(value) || value.length === 0)
    throw new ConfigError(`${variable} must list at least one webhook`);
  return value.map((entry: { format?: string; parameter?: string; queue?: unknown }) => {
    const spec = parseWebhookSpec(`${entry?.format}:${entry?.parameter}`);
    if (typeof entry.queue !== 'string' || !entry.queue.startsWith('arn:'))
      throw new ConfigError(`${variable}: the ${spec.format} webhook ${spec.parameter} names no queue ARN`);
    return { ...spec, queue: entry.queue };
  });
}

/** What an HTTP answer of a webhook means for the delivery. */
export type AnswerKind = 'delivered' | 'retry' | 'rejected';

/**
 * 2xx delivered (Slack answers 200 `ok`, Teams Workflows 202). 408, 425, 429 and 5xx may pass:
 * retry. Any other answer is the webhook refusing it (a revoked or mistyped URL: 403, 404, 410; a
 * body it will not take: 400), and a redirect is not followed (a webhook that moved must be
 * configured anew): a configuration error, retried no sooner than the queue redelivers.
 */
export function answerKind(status: number): AnswerKind {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 408 || status === 425 || status === 429 || status >= 500) return 'retry';
  return 'rejected';
}

/** Longest wait between two tries within one delivery; a longer Retry-After is left to the queue. */
export const MAX_RETRY_DELAY_MS = 10_000;

/**
 * How long to wait before try `attempt + 1` (attempt 0 is the first): 1 s, 2 s, 4 s, …, or the
 * webhook's Retry-After (seconds or an HTTP date, read as the reseller client reads it) when it asks
 * for longer; at most {@link MAX_RETRY_DELAY_MS}. A Retry-After of 0 (or a date already past) still
 * waits the backoff: tries back to back into a webhook that is refusing them are wasted. Returns null
 * when the webhook asks for longer: then the delivery fails and the queue retries later.
 */
export function retryDelayMs(attempt: number, retryAfter: string | null, nowMs: number): number | null {
  const backoff = Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** attempt);
  const asked = parseRetryAfter(retryAfter, nowMs);
  if (asked === undefined) return backoff;
  return asked > MAX_RETRY_DELAY_MS ? null : Math.max(asked, backoff);
}

/** `hooks.slack.com`: what may be said of a webhook URL (its path and query are the secret). */
export function webhookHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(not a URL)';
  }
}

/** Parts of a URL shorter than this are no secret worth hiding (`v1`, `api`), and hiding them would garble the answer. */
const SECRET_PART_MIN = 6;

/**
 * `text` (a webhook's answer) without the secret parts of `url`: the URL itself, its path and query,
 * each path segment and query value, as written and decoded, each replaced by `…`. A plain web server
 * quotes the path it was asked for (`Cannot POST /services/T0/B0/secret`), and the answer is logged.
 */
export function withoutUrlSecrets(text: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return text.split(url).join('…');
  }
  const raw = [
    url,
    parsed.href,
    `${parsed.pathname}${parsed.search}`,
    parsed.pathname,
    parsed.search.slice(1),
    ...parsed.pathname.split('/'),
    ...parsed.search
      .slice(1)
      .split('&')
      .flatMap((pair) => [pair, pair.slice(pair.indexOf('=') + 1)]),
  ];
  const decoded = raw.map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  const parts = [...new Set([...raw, ...decoded])]
    .filter((part) => part.length >= SECRET_PART_MIN)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const part of parts) out = out.split(part).join('…');
  return out;
}

/** Checks a webhook URL given on the command line or read from SSM: https (http only to this machine). */
export function checkWebhookUrl(url: string, source: string): string {
  const text = secretUrlText(url, source);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ConfigError(`${source} is not a URL`);
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && isLoopbackUrl(parsed)))
    throw new ConfigError(
      `${source} must be an https URL (http only to 127.0.0.1 or localhost): the URL is the webhook's secret`,
    );
  if (parsed.username || parsed.password) throw new ConfigError(`${source} must not carry credentials`);
  return parsed.toString();
}
