import * as AC from 'adaptivecards';
import * as z from 'zod';

/**
 * The documented rules of each chat format, kept here as the tests' own copy so a message is
 * checked against what the platform says, not against what our code produces.
 */

/**
 * Amazon Q Developer in chat applications (AWS Chatbot), custom notifications: event schema and
 * parameter details, https://docs.aws.amazon.com/chatbot/latest/adminguide/custom-notifs.html
 * - version: required, must be "1.0"; source: required, must be "custom"; id: optional string
 * - content.textType: optional, only "client-markdown"
 * - content.title: optional, markdown, at most 250 characters
 * - content.description: markdown, at most 8 000 characters
 * - content.nextSteps: optional list of strings, each at most 350 characters
 * - content.keywords: optional list of strings, each at most 75 characters
 * - metadata.threadId, summary, eventType: optional strings; relatedResources: list of strings;
 *   additionalContext: a string-to-string map; enableCustomActions: optional boolean
 * Anything else is not in the schema: the service drops a message it cannot read (UnsupportedEvents).
 */
export const CustomNotificationSchema = z
  .object({
    version: z.literal('1.0'),
    source: z.literal('custom'),
    id: z.string().optional(),
    content: z
      .object({
        textType: z.literal('client-markdown').optional(),
        title: z.string().max(250).optional(),
        description: z.string().max(8_000),
        nextSteps: z.array(z.string().max(350)).optional(),
        keywords: z.array(z.string().max(75)).optional(),
      })
      .strict(),
    metadata: z
      .object({
        threadId: z.string().optional(),
        summary: z.string().optional(),
        eventType: z.string().optional(),
        relatedResources: z.array(z.string()).optional(),
        additionalContext: z.record(z.string(), z.string()).optional(),
        enableCustomActions: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/**
 * Slack Block Kit, the blocks and elements this project sends, with their documented limits:
 * https://docs.slack.dev/reference/block-kit/blocks (50 blocks a message), section block (text at
 * most 3 000 characters; one accessory), header block (plain_text, 150), context block (10
 * elements), actions block (25 elements), button element (text 75, url 3 000, action_id 255),
 * text object (type plain_text or mrkdwn; emoji only on plain_text). Plus what Slack enforces
 * without documenting it: about 13 000 characters of blocks in all (`msg_blocks_too_long`,
 * https://github.com/slackapi/bolt-js/issues/2509).
 */
const plainText = (max: number) =>
  z
    .object({
      type: z.literal('plain_text'),
      text: z.string().min(1).max(max),
      emoji: z.boolean().optional(),
    })
    .strict();
const mrkdwn = (max: number) =>
  z.object({ type: z.literal('mrkdwn'), text: z.string().min(1).max(max) }).strict();
const slackButton = z
  .object({
    type: z.literal('button'),
    text: plainText(75),
    url: z.url().max(3_000),
    action_id: z.string().max(255),
  })
  .strict();
const SlackBlockSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('header'), text: plainText(150) }).strict(),
  z
    .object({
      type: z.literal('section'),
      text: z.union([plainText(3_000), mrkdwn(3_000)]),
      accessory: slackButton.optional(),
    })
    .strict(),
  z.object({ type: z.literal('actions'), elements: z.array(slackButton).min(1).max(25) }).strict(),
  z
    .object({
      type: z.literal('context'),
      elements: z.array(z.union([plainText(3_000), mrkdwn(3_000)])).max(10),
    })
    .strict(),
  z.object({ type: z.literal('divider') }).strict(),
]);
export const SlackMessageSchema = z
  .object({ text: z.string().min(1).max(40_000), blocks: z.array(SlackBlockSchema).min(1).max(50) })
  .strict()
  .refine((m) => blocksText(m.blocks) <= 13_000, 'blocks hold more text than Slack takes in one message');

/** The characters of text in blocks, as Slack counts them against `msg_blocks_too_long`. */
export function blocksText(blocks: ReadonlyArray<Record<string, unknown>>): number {
  let n = 0;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (k === 'text' && typeof x === 'string') n += x.length;
        else walk(x);
      }
  };
  walk(blocks);
  return n;
}

/**
 * A Teams Workflows webhook message ("Post to a channel when a webhook request is received"):
 * `type: message` with attachments of contentType application/vnd.microsoft.card.adaptive whose
 * `content` is the card, https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using
 * Size: 28 KB for the whole message (Microsoft Teams limits); 21 KB has been seen to fail in practice.
 */
export const TeamsMessageSchema = z
  .object({
    type: z.literal('message'),
    attachments: z
      .array(
        z
          .object({
            contentType: z.literal('application/vnd.microsoft.card.adaptive'),
            contentUrl: z.null().optional(),
            content: z
              .object({
                type: z.literal('AdaptiveCard'),
                version: z.string(),
                $schema: z.string().optional(),
              })
              .loose(),
          })
          .strict(),
      )
      .length(1),
  })
  .strict();

/**
 * The card checked by Microsoft's own Adaptive Cards library (the `adaptivecards` package, the
 * renderer for HTML clients) at the version the card declares: an element, property or value
 * newer than that version, an unknown element type, an invalid value or a missing required
 * property is an event. Returns the events as text; empty means valid.
 */
export function adaptiveCardProblems(card: { version: string }): string[] {
  const version = AC.Version.parse(card.version, new AC.SerializationContext());
  if (!version) return [`version ${card.version} is not a version`];
  const context = new AC.SerializationContext(version);
  const parsed = new AC.AdaptiveCard();
  parsed.parse(card, context);
  const problems: string[] = [];
  for (let i = 0; i < context.eventCount; i++) problems.push(context.getEventAt(i).message);
  for (const e of parsed.validateProperties().validationEvents) problems.push(e.message);
  // The library ignores keys it does not know; a card that says more than the schema is wrong too.
  problems.push(...unknownCardKeys(card));
  return problems;
}

/**
 * Keys of the elements this card uses that the Adaptive Card schema does not define
 * (adaptivecards.io/explorer: AdaptiveCard, TextBlock, RichTextBlock, TextRun, Action.OpenUrl).
 */
const CARD_KEYS: Record<string, readonly string[]> = {
  AdaptiveCard: ['type', 'version', '$schema', 'body', 'actions', 'msteams', 'fallbackText', 'speak', 'lang'],
  TextBlock: [
    'type',
    'text',
    'color',
    'fontType',
    'isSubtle',
    'maxLines',
    'size',
    'weight',
    'wrap',
    'style',
    'spacing',
    'separator',
    'id',
    'horizontalAlignment',
  ],
  RichTextBlock: ['type', 'inlines', 'horizontalAlignment', 'spacing', 'separator', 'id'],
  TextRun: [
    'type',
    'text',
    'color',
    'fontType',
    'highlight',
    'isSubtle',
    'italic',
    'selectAction',
    'size',
    'strikethrough',
    'underline',
    'weight',
  ],
  'Action.OpenUrl': ['type', 'url', 'title', 'iconUrl', 'id', 'style', 'tooltip'],
};
function unknownCardKeys(node: unknown, where = 'card'): string[] {
  if (Array.isArray(node)) return node.flatMap((x, i) => unknownCardKeys(x, `${where}[${i}]`));
  if (!node || typeof node !== 'object') return [];
  const v = node as Record<string, unknown>;
  const known = typeof v.type === 'string' ? CARD_KEYS[v.type] : undefined;
  const out: string[] = [];
  if (typeof v.type === 'string' && !known)
    out.push(`${where}: element type ${v.type} is not one this check knows`);
  for (const [key, value] of Object.entries(v)) {
    if (known && !known.includes(key)) out.push(`${where}.${key} is not a property of ${v.type}`);
    if (key !== 'msteams') out.push(...unknownCardKeys(value, `${where}.${key}`));
  }
  return out;
}
