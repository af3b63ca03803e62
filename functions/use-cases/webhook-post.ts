import { randomUUID } from 'node:crypto';
import { reportJsonOf } from '../core/alerts/message';
import {
  type AnswerKind,
  answerKind,
  retryDelayMs,
  webhookHost,
  withoutUrlSecrets,
} from '../core/alerts/webhook-delivery';
import {
  DELIVERY_HEADER,
  parseAlertReport,
  renderWebhookBody,
  SIGNATURE_HEADER,
  signWebhookBody,
} from '../core/alerts/webhook-formats';
import { PublishError } from '../core/base/errors';
import { retry } from '../core/base/retry';
import { cutText, safeText } from '../core/base/text';
import type { WebhookFormat } from '../core/scan/config';
import type { AlertSender } from './publish-alert';

/** What became of one post to a webhook, after its retries. */
export interface WebhookOutcome {
  readonly kind: AnswerKind | 'failed';
  /** The last HTTP status, 0 when no answer came. */
  readonly status: number;
  readonly attempts: number;
  /** The webhook's own words (Slack's `invalid_token`, …), cut and made safe, or what went wrong. */
  readonly reason: string;
  /** Where it went, as it may be said: the host only. */
  readonly host: string;
}

export interface PostOptions {
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Tries in all. @default 3 */
  readonly attempts?: number;
  /** Per try. @default 10 000 ms */
  readonly timeoutMs?: number;
  /** Epoch ms after which no further try starts (the function's own deadline). @default none */
  readonly deadline?: number;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default Date.now */
  readonly clock?: () => number;
}

/** At most this much of a webhook's answer is read: it only explains a refusal. */
const ANSWER_EXCERPT = 300;

/**
 * The first few hundred characters of an answer, without reading the rest (a hostile server can send
 * gigabytes), and without any secret part of `url` it quotes: read a URL's length further than shown,
 * so a part that starts within what is shown is hidden whole.
 */
async function excerpt(response: Response, url: string): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < 4 * ANSWER_EXCERPT + url.length) {
      const { done, value } = await reader.read();
      if (done || !value) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // An answer cut off midway still explains what it can.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return cutText(withoutUrlSecrets(Buffer.concat(chunks).toString('utf8'), url), ANSWER_EXCERPT);
}

/**
 * Posts `body` (JSON) to a webhook, retrying what may pass (timeouts, 408/425/429, 5xx) with backoff
 * (1 s, 2 s, … or the Retry-After it asks, up to 10 s). A redirect is not followed. The URL is the
 * webhook's secret: nothing returned or thrown here holds more of it than its host.
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  options: PostOptions = {},
): Promise<WebhookOutcome> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const clock = options.clock ?? Date.now;
  const host = webhookHost(url);
  let last: WebhookOutcome = { kind: 'failed', status: 0, attempts: 0, reason: 'not tried', host };
  const tryOnce = async (attempt: number): Promise<WebhookOutcome> => {
    // A try never runs past the deadline: the function must answer before Lambda's timeout.
    const left = options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - clock();
    if (left < 1_000) throw new Unanswered(null);
    let retryAfter: string | null = null;
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(Math.min(options.timeoutMs ?? 10_000, left)),
      });
      const text = safeText(await excerpt(response, url));
      const kind = answerKind(response.status);
      const reason = text || withoutUrlSecrets(response.statusText, url);
      last = { kind, status: response.status, attempts: attempt, reason, host };
      if (kind !== 'retry') return last;
      retryAfter = response.headers.get('retry-after');
    } catch (error) {
      // The error of a failed fetch can quote the URL: only its name and our words are kept.
      const name = (error as Error).name;
      const reason = name === 'TimeoutError' ? 'no answer in time' : `no answer (${name})`;
      last = { kind: 'failed', status: 0, attempts: attempt, reason, host };
    }
    throw new Unanswered(retryAfter);
  };
  try {
    return await retry(tryOnce, {
      retries: (options.attempts ?? 3) - 1,
      // Backoff (1 s, 2 s, …) or the Retry-After the webhook asks, up to 10 s; none past the deadline.
      shouldRetry: ({ error, attemptNumber }) => {
        if (!(error instanceof Unanswered)) return false;
        const wait = retryDelayMs(attemptNumber - 1, error.retryAfter, clock());
        if (wait === null || (options.deadline !== undefined && clock() + wait >= options.deadline))
          return false;
        return { delayMs: wait };
      },
      ...(options.sleep ? { sleep: options.sleep } : {}),
      clock,
    });
  } catch (error) {
    if (!(error instanceof Unanswered)) throw error;
    return last.kind === 'retry' ? { ...last, kind: 'failed' } : last;
  }
}

/** A try that may pass another time (a timeout, 408/425/429, 5xx), with the wait the webhook asked for. */
class Unanswered extends Error {
  override readonly name: string = 'Unanswered';
  constructor(readonly retryAfter: string | null) {
    super('the webhook did not take the post');
  }
}

/** Where `scan --webhook` posts: the URL (a secret), its format, and the JSON format's signing key. */
export interface WebhookDestination {
  readonly url: string;
  readonly format: WebhookFormat;
  /** Signs the json format (WEBHOOK_SIGNING_KEY); absent, the json body goes unsigned. */
  readonly signingKey?: string;
  readonly accountLabel?: string;
  readonly timeZone?: string;
}

/**
 * `scan --webhook URL --webhook-format F`: the alert posted from this machine, the body built from
 * the message SNS would carry (its JSON report), as the webhook subscriber builds it. A webhook that
 * does not take it is a PublishError naming its host and answer, never its URL.
 */
export function webhookSender(destination: WebhookDestination, options: PostOptions = {}): AlertSender {
  return async (alert) => {
    const reportJson = reportJsonOf(alert);
    const body = renderWebhookBody(destination.format, reportJson, parseAlertReport(reportJson), {
      ...(destination.timeZone ? { timeZone: destination.timeZone } : {}),
      ...(destination.accountLabel ? { accountLabel: destination.accountLabel } : {}),
    });
    // One id per alert, the same on every try of it (as the subscriber sends SNS's message id).
    const deliveryId = randomUUID();
    const headers: Record<string, string> = {
      'user-agent': 'domain-sentinel',
      [DELIVERY_HEADER.toLowerCase()]: deliveryId,
    };
    if (destination.format === 'json' && destination.signingKey)
      headers[SIGNATURE_HEADER.toLowerCase()] = signWebhookBody({
        body,
        deliveryId,
        key: destination.signingKey,
        unixSeconds: Math.floor((options.clock ?? Date.now)() / 1000),
      });
    const outcome = await postWebhook(destination.url, body, headers, options);
    if (outcome.kind !== 'delivered')
      throw new PublishError(
        `the ${destination.format} webhook at ${outcome.host} ${outcome.status ? `answered HTTP ${outcome.status}` : 'gave no answer'} after ${outcome.attempts} ${outcome.attempts === 1 ? 'try' : 'tries'}${outcome.reason ? ` (${cutText(outcome.reason, 120)})` : ''}; ${outcome.kind === 'rejected' ? 'check the webhook URL and --webhook-format' : 'try again later'}`,
      );
    return `${destination.format} webhook at ${outcome.host}`;
  };
}
