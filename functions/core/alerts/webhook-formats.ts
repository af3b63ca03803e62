import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import { ConfigError } from '../base/errors';
import { cutText, plural } from '../base/text';
import type { WebhookFormat } from '../scan/config';
import type { Report } from '../scan/scan';
import { dateFormat } from './alert';
import {
  type ChatItem,
  type ChatOptions,
  chatCounts,
  chatItems,
  chatTitle,
  chatUrl,
  codeSpan,
  leftOutLine,
} from './chat';

/**
 * The bodies posted to webhooks: a Slack incoming webhook (`text` + Block Kit `blocks`), a Teams
 * Workflows webhook (a message carrying an Adaptive Card) and a generic JSON webhook (the report,
 * signed). Each is cut to its platform's limits with "and N more", never silently. Names are
 * chat-safe (chat.ts); in Slack they sit in code spans, in Teams in plain TextRuns, which Adaptive
 * Cards never read as markdown.
 */

/**
 * Slack's limits for a message: 50 blocks, 3 000 characters in a section's text, 150 in a header,
 * 75 in a button's text, 3 000 in its URL (Block Kit reference). Slack also refuses a message whose
 * blocks hold more than about 13 000 characters in all (`msg_blocks_too_long`, slackapi/bolt-js#2509),
 * though no page documents it: the blocks are kept to 12 000.
 */
export const SLACK_LIMITS = {
  blocks: 50,
  sectionText: 3_000,
  headerText: 150,
  buttonText: 75,
  buttonUrl: 3_000,
  contextElements: 10,
  blocksText: 12_000,
} as const;

/**
 * The size a Teams message may have: Microsoft documents 28 KB for Workflows and incoming webhooks;
 * posts of 21 KB and more have been seen to fail, so the card is kept to 20 000 bytes.
 */
export const TEAMS_MAX_BYTES = 20_000;
/** The Adaptive Card version declared: what Teams renders on desktop, web and mobile. */
export const ADAPTIVE_CARD_VERSION = '1.5';

/** A report as a webhook subscriber reads it from the alert topic: only what the formats use is checked. */
const ReportShape = z
  .object({
    generated_at: z.string(),
    now: z.string(),
    stats: z.object({ domains_scanned: z.number() }).loose(),
    summary: z.object({ critical: z.number(), warning: z.number(), info: z.number() }).loose(),
    findings: z.array(z.object({ severity: z.string(), kind: z.string() }).loose()),
    problems: z.array(z.object({ severity: z.string().optional() }).loose()),
    // With memory: the critical changes are items of their own (chat.ts), counted with the cut's.
    changes: z
      .array(z.object({ domain_name: z.string(), kind: z.string(), severity: z.string() }).loose())
      .optional(),
    changes_truncated: z.object({ critical_changes_omitted: z.number() }).loose().optional(),
    report_url: z.string().optional(),
    // What names the message's account and group (webhook-subscriber.ts).
    source: z
      .object({ account: z.string(), account_label: z.string(), group: z.string(), time_zone: z.string() })
      .partial()
      .loose()
      .optional(),
  })
  .loose();

/** The JSON report of an alert message (its `default` variant); a ConfigError names what is wrong. */
export function parseAlertReport(text: string): Report {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `the message is not JSON (${(error as Error).message.slice(0, 80)}); is the queue subscribed to the alert topic?`,
      { cause: error },
    );
  }
  const parsed = ReportShape.safeParse(value);
  if (!parsed.success)
    throw new ConfigError(
      `the message is not a domain-sentinel report (${parsed.error.issues
        .map((i) => `${i.path.join('.') || 'message'}: ${i.message}`)
        .join('; ')
        .slice(0, 200)}); is the queue subscribed to the alert topic?`,
    );
  return value as Report;
}

/** Slack's escaping of text it parses (mrkdwn): only `&`, `<` and `>`, and always those. */
const slackEscape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

type SlackText = { type: 'plain_text' | 'mrkdwn'; text: string; emoji?: boolean };
type SlackButton = { type: 'button'; text: SlackText; url: string; action_id: string };
export type SlackBlock =
  | { type: 'header'; text: SlackText }
  | { type: 'section'; text: SlackText; accessory?: SlackButton }
  | { type: 'actions'; elements: SlackButton[] }
  | { type: 'context'; elements: SlackText[] }
  | { type: 'divider' };

export interface SlackMessage {
  /** What notifications and clients without blocks show. */
  readonly text: string;
  readonly blocks: SlackBlock[];
}

const plainText = (text: string): SlackText => ({ type: 'plain_text', text, emoji: false });
const button = (text: string, url: string, id: string): SlackButton => ({
  type: 'button',
  text: plainText(cutText(text, SLACK_LIMITS.buttonText)),
  url: chatUrl(url),
  action_id: id,
});
const textOf = (block: SlackBlock): number =>
  'text' in block
    ? block.text.text.length +
      ('accessory' in block && block.accessory ? block.accessory.text.text.length : 0)
    : block.type === 'context'
      ? block.elements.reduce((n, e) => n + e.text.length, 0)
      : block.type === 'actions'
        ? block.elements.reduce((n, e) => n + e.text.text.length, 0)
        : 0;

const slackLine = (item: ChatItem) =>
  `• ${codeSpan(item.name)}: ${slackEscape(item.what)}\n    Next: ${slackEscape(item.next)}`;

/** True for a link short enough for a Slack button. */
const urlFits = (url: string | undefined): url is string =>
  !!url && chatUrl(url).length <= SLACK_LIMITS.buttonUrl;

/**
 * Adds an item to `blocks`: a section with its "Act on it" button when it has a `link` that fits,
 * else its line, joined to the bullet section before it while that stays within a section's limit.
 */
function appendItem(blocks: SlackBlock[], item: ChatItem, link: string | undefined, actionId: string): void {
  const line = slackLine(item);
  const last = blocks[blocks.length - 1];
  if (link) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: cutText(line, SLACK_LIMITS.sectionText) },
      accessory: button('Act on it', link, actionId),
    });
  } else if (
    last?.type === 'section' &&
    !last.accessory &&
    last.text.text.startsWith('•') &&
    last.text.text.length + 1 + line.length <= SLACK_LIMITS.sectionText
  ) {
    blocks[blocks.length - 1] = {
      type: 'section',
      text: { type: 'mrkdwn', text: `${last.text.text}\n${line}` },
    };
  } else {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: cutText(line, SLACK_LIMITS.sectionText) } });
  }
}

/**
 * The Slack incoming-webhook body: a header with the counts, the report's button, each item in
 * quarantine as a section with its Restore button (buttons carry URLs, so no link syntax is parsed),
 * the others packed into sections of at most 3 000 characters, "and N more", and a context line.
 */
export function renderSlackMessage(report: Report, options: ChatOptions = {}): SlackMessage {
  const timeZone = options.timeZone ?? 'UTC';
  const title = chatTitle(report, options.accountLabel, SLACK_LIMITS.headerText);
  const items = chatItems(report, timeZone);
  const { time } = dateFormat(timeZone);
  const head: SlackBlock[] = [{ type: 'header', text: plainText(cutText(title, SLACK_LIMITS.headerText)) }];
  if (urlFits(report.report_url))
    head.push({ type: 'actions', elements: [button('Open the full report', report.report_url, 'report')] });
  const footer: SlackBlock = {
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: slackEscape(
          `Scanned ${plural(report.stats.domains_scanned, 'domain')} at ${time(report.now)}.`,
        ),
      },
    ],
  };
  const counts = chatCounts(report);
  const more = (shownCount: number): SlackBlock[] => {
    const line = leftOutLine(report, items, shownCount);
    return line ? [{ type: 'section', text: { type: 'mrkdwn', text: slackEscape(line) } }] : [];
  };
  const body: SlackBlock[] = [];
  const fits = (candidate: readonly SlackBlock[], shownCount: number) => {
    const all = [...head, ...candidate, ...more(shownCount), footer];
    return (
      all.length <= SLACK_LIMITS.blocks && all.reduce((n, b) => n + textOf(b), 0) <= SLACK_LIMITS.blocksText
    );
  };
  let shown = 0;
  let section: ChatItem['severity'] | undefined;
  const limit = options.detailLimit ?? Number.POSITIVE_INFINITY;
  for (const item of items) {
    if (shown >= limit) break;
    const candidate = [...body];
    if (item.severity !== section) {
      const count = counts[item.severity];
      candidate.push({
        type: 'section',
        text: { type: 'mrkdwn', text: `*${item.severity.toUpperCase()} (${count})*` },
      });
    }
    appendItem(candidate, item, urlFits(item.link) ? item.link : undefined, `act-${shown}`);
    if (!fits(candidate, shown + 1)) break;
    body.splice(0, body.length, ...candidate);
    section = item.severity;
    shown++;
  }
  if (items.length === 0)
    body.push({ type: 'section', text: { type: 'mrkdwn', text: 'Nothing critical or urgent.' } });
  return {
    text: slackEscape(title),
    blocks: [...head, ...body, ...more(shown), footer],
  };
}

/** An Adaptive Card element, as far as this card uses them. */
export type CardElement = Record<string, unknown> & { type: string };

/** The Teams Workflows webhook body: a message with one Adaptive Card attachment. */
export interface TeamsMessage {
  readonly type: 'message';
  readonly attachments: ReadonlyArray<{
    readonly contentType: 'application/vnd.microsoft.card.adaptive';
    readonly contentUrl: null;
    readonly content: {
      readonly $schema: string;
      readonly type: 'AdaptiveCard';
      readonly version: string;
      readonly body: CardElement[];
      readonly actions?: CardElement[];
      readonly msteams: { readonly width: 'Full' };
    };
  }>;
}

/** One item: the name in monospace and the words as TextRuns (never markdown), the restore link as a run that opens it. */
function cardItem(item: ChatItem): CardElement {
  return {
    type: 'RichTextBlock',
    inlines: [
      { type: 'TextRun', text: '• ' },
      { type: 'TextRun', text: item.name, fontType: 'Monospace' },
      { type: 'TextRun', text: `: ${item.what}. Next: ${item.next}` },
      ...(item.link
        ? [
            { type: 'TextRun', text: '  ' },
            {
              type: 'TextRun',
              text: 'Act on it',
              weight: 'Bolder',
              color: 'Accent',
              selectAction: { type: 'Action.OpenUrl', url: chatUrl(item.link), title: 'Act on it' },
            },
          ]
        : []),
    ],
  };
}

const plainRun = (text: string, extra: Record<string, unknown> = {}): CardElement => ({
  type: 'RichTextBlock',
  inlines: [{ type: 'TextRun', text, ...extra }],
});

/**
 * The Teams Workflows webhook body: an Adaptive Card (version {@link ADAPTIVE_CARD_VERSION}) with a
 * heading, the items (critical first, restore links that open the confirmation page), "and N more",
 * and the report as its action, kept under {@link TEAMS_MAX_BYTES}.
 */
export function renderTeamsMessage(report: Report, options: ChatOptions = {}): TeamsMessage {
  const timeZone = options.timeZone ?? 'UTC';
  const items = chatItems(report, timeZone);
  const { time } = dateFormat(timeZone);
  const counts = chatCounts(report);
  const heading = plainRun(chatTitle(report, options.accountLabel), { size: 'Medium', weight: 'Bolder' });
  const footer = plainRun(
    `Scanned ${plural(report.stats.domains_scanned, 'domain')} at ${time(report.now)}.`,
    {
      isSubtle: true,
    },
  );
  const more = (shownCount: number): CardElement[] => {
    const line = leftOutLine(report, items, shownCount);
    return line ? [plainRun(line)] : [];
  };
  const actions: CardElement[] = report.report_url
    ? [{ type: 'Action.OpenUrl', title: 'Open the full report', url: chatUrl(report.report_url) }]
    : [];
  const message = (body: CardElement[]): TeamsMessage => ({
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: ADAPTIVE_CARD_VERSION,
          body,
          ...(actions.length ? { actions } : {}),
          msteams: { width: 'Full' },
        },
      },
    ],
  });
  const bytes = (m: TeamsMessage) => Buffer.byteLength(JSON.stringify(m), 'utf8');
  const body: CardElement[] = [];
  let shown = 0;
  let section: ChatItem['severity'] | undefined;
  const limit = options.detailLimit ?? Number.POSITIVE_INFINITY;
  for (const item of items) {
    if (shown >= limit) break;
    const count = counts[item.severity];
    const add: CardElement[] =
      item.severity !== section
        ? [
            {
              type: 'TextBlock',
              text: `${item.severity.toUpperCase()} (${count})`,
              weight: 'Bolder',
              color: item.severity === 'critical' ? 'Attention' : 'Warning',
              spacing: 'Medium',
              wrap: true,
            },
          ]
        : [];
    const candidate = [...body, ...add, cardItem(item)];
    if (bytes(message([heading, ...candidate, ...more(shown + 1), footer])) > TEAMS_MAX_BYTES) break;
    body.push(...add, cardItem(item));
    section = item.severity;
    shown++;
  }
  if (items.length === 0) body.push(plainRun('Nothing critical or urgent.'));
  return message([heading, ...body, ...more(shown), footer]);
}

/** The signature header of the JSON webhook. */
export const SIGNATURE_HEADER = 'X-Sentinel-Signature';
/** The delivery id header: one id per alert, the same on every retry of it; covered by the signature. */
export const DELIVERY_HEADER = 'X-Sentinel-Delivery';
/** A receiver refuses a signature older (or newer) than this: a replayed delivery. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;
/**
 * What a delivery id may hold (an SNS message id or a UUID fits): no `.`, so the signed string
 * `<t>.<id>.<body>` splits one way only, and no character a header cannot carry.
 */
const DELIVERY_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** One delivery of the JSON webhook: what the signature covers. */
export interface SignedDelivery {
  /** The body as sent, byte for byte. */
  readonly body: string;
  /** The X-Sentinel-Delivery header's value. */
  readonly deliveryId: string;
  readonly key: string;
}

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<delivery id>.<body>">`. Every field a receiver
 * relies on is covered: the time (to refuse a replay), the delivery id (to ignore a repeat: an
 * unsigned id would let a captured delivery be replayed as a new alert) and the body. The key is
 * the webhook signing key (at least 32 characters).
 */
export function signWebhookBody(delivery: SignedDelivery & { readonly unixSeconds: number }): string {
  if (!DELIVERY_ID.test(delivery.deliveryId))
    throw new RangeError('a delivery id is 1 to 128 of A-Z, a-z, 0-9, _ and -');
  return `t=${delivery.unixSeconds},v1=${webhookMac(delivery, delivery.unixSeconds)}`;
}

const webhookMac = (delivery: SignedDelivery, t: number) =>
  createHmac('sha256', delivery.key)
    .update(`${t}.${delivery.deliveryId}.${delivery.body}`, 'utf8')
    .digest('hex');

/**
 * What a receiver does with the headers: recompute the HMAC over `<t>.<delivery id>.<raw body>`,
 * compare in constant time, and refuse a time outside the tolerance. Returns why it refuses, or null.
 */
export function verifyWebhookSignature(
  delivery: SignedDelivery & {
    readonly header: string | undefined;
    readonly nowSeconds: number;
    readonly toleranceSeconds?: number;
  },
): string | null {
  const { header } = delivery;
  const parts = Object.fromEntries(
    (header ?? '').split(',').map((p) => {
      const at = p.indexOf('=');
      return [p.slice(0, at).trim(), p.slice(at + 1).trim()];
    }),
  );
  const t = Number(parts.t);
  if (!header || !Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(parts.v1 ?? ''))
    return 'no valid signature header';
  if (Math.abs(delivery.nowSeconds - t) > (delivery.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS))
    return 'signature time outside the tolerance (a replay?)';
  const expected = Buffer.from(webhookMac(delivery, t));
  const given = Buffer.from(parts.v1 as string);
  return timingSafeEqual(expected, given) ? null : 'signature does not match';
}

/** The body of each format for one report: what is posted, as text. */
export function renderWebhookBody(
  format: WebhookFormat,
  reportJson: string,
  report: Report,
  options: ChatOptions = {},
): string {
  if (format === 'slack') return JSON.stringify(renderSlackMessage(report, options));
  if (format === 'teams') return JSON.stringify(renderTeamsMessage(report, options));
  return reportJson;
}
