import { join } from 'node:path';
import { type ChatNotification, chatNotificationOf } from '../../functions/core/alerts/chat';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import {
  renderSlackMessage,
  renderTeamsMessage,
  type SlackMessage,
} from '../../functions/core/alerts/webhook-formats';
import type { Report } from '../../functions/core/scan/scan';
import { ROOT } from '../../scripts/docs';
import { domainFinding, NOW_ISO, reportOf } from './report';
import { sha256 } from './report-screenshot';

/**
 * docs/images/chat-message.png: one alert as each chat shows it, side by side. What it is, honestly:
 * - Teams: the Adaptive Card as posted, rendered by Microsoft's own Adaptive Cards library for HTML
 *   clients (the `adaptivecards` package) with a host config in Teams' fonts and colours; Teams
 *   itself draws the card frame and spacing a little differently.
 * - Slack: the Block Kit message as posted, drawn by the small renderer below (header, mrkdwn
 *   sections with bold and code spans, buttons, context): an approximation, not Slack's client.
 * - Amazon Q Developer: the custom notification as published, drawn the way the service lays it out
 *   in Slack (title, description, next steps, keywords): an approximation too.
 */

export const CHAT_PICTURE_PATH = join(ROOT, 'docs', 'images', 'chat-message.png');
export const CHAT_VIEWPORT = { width: 1280, height: 1120 } as const;
export const ADAPTIVE_CARDS_SCRIPT = join(
  ROOT,
  'node_modules',
  'adaptivecards',
  'dist',
  'adaptivecards.min.js',
);

const BASE = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod';
const link = (path: string) => `${BASE}/${path}?exp=1795600000&kid=k1&sig=${'Q'.repeat(43)}`;

/** A small account on the docs' instant, with one name a hostile API could send. */
export function pictureReport(): Report {
  return {
    ...reportOf([
      domainFinding('bakkerij-devries.nl', 'quarantine', 'critical', -31, {
        date_deleted: '2026-10-24T09:00:00.000Z',
        restore_by: '2026-11-25T09:00:00.000Z',
        days_to_restore: 3,
        restore_url: link('restore/bakkerij-devries.nl'),
      }),
      domainFinding('<!channel>-promo.nl', 'quarantine', 'critical', -12, {
        date_deleted: '2026-11-10T09:00:00.000Z',
        restore_by: '2026-12-20T09:00:00.000Z',
        days_to_restore: 28,
        restore_url: link('restore/%3C!channel%3E-promo.nl'),
      }),
      domainFinding('webshop-example.com', 'expiring', 'critical', 2),
      domainFinding('pаypal-login.com', 'expiring', 'warning', 18),
      domainFinding('later.eu', 'expiring', 'warning', 26),
    ]),
    report_url: link('report'),
  };
}

export interface ChatPicture {
  readonly slack: SlackMessage;
  readonly teams: ReturnType<typeof renderTeamsMessage>;
  readonly chatbot: ChatNotification;
  /** The page without the Adaptive Cards library, which the browser loads from the package. */
  readonly html: string;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Slack's mrkdwn as far as these messages use it: entities, `code`, *bold*, line breaks. */
function mrkdwn(text: string): string {
  const decoded = text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return escapeHtml(decoded)
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith('`') && part.endsWith('`')
        ? `<code>${part.slice(1, -1)}</code>`
        : part.replace(/\*([^*\n]+)\*/g, '<b>$1</b>'),
    )
    .join('')
    .replace(/\n/g, '<br>');
}

function slackHtml(message: SlackMessage): string {
  const blocks = message.blocks.map((b) => {
    if (b.type === 'header') return `<div class="s-header">${escapeHtml(b.text.text)}</div>`;
    if (b.type === 'actions')
      return `<div class="s-actions">${b.elements.map((e) => `<span class="s-button">${escapeHtml(e.text.text)}</span>`).join('')}</div>`;
    if (b.type === 'context')
      return `<div class="s-context">${b.elements.map((e) => mrkdwn(e.text)).join(' ')}</div>`;
    if (b.type === 'section')
      return `<div class="s-section"><div>${mrkdwn(b.text.text)}</div>${b.accessory ? `<span class="s-button">${escapeHtml(b.accessory.text.text)}</span>` : ''}</div>`;
    return '<hr>';
  });
  return `<div class="s-msg"><div class="s-avatar">ds</div><div><div class="s-name">domain-sentinel <span>APP 07:00</span></div>${blocks.join('')}</div></div>`;
}

/** Markdown of the custom notification, as Slack shows it: code spans, line breaks, bare links. */
function notificationMarkdown(text: string): string {
  return escapeHtml(text)
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith('`') && part.endsWith('`')
        ? `<code>${part.slice(1, -1)}</code>`
        : part.replace(/(https:\/\/\S+)/g, '<a>$1</a>'),
    )
    .join('')
    .replace(/\n/g, '<br>');
}

function chatbotHtml(n: ChatNotification): string {
  const steps = (n.content.nextSteps ?? []).map((s) => `<li>${notificationMarkdown(s)}</li>`).join('');
  const keywords = (n.content.keywords ?? [])
    .map((k) => `<span class="q-kw">${escapeHtml(k)}</span>`)
    .join('');
  return `<div class="s-msg"><div class="s-avatar q">Q</div><div><div class="s-name">Amazon Q <span>APP 07:00</span></div>
  <div class="q-card"><div class="q-title">${escapeHtml(n.content.title)}</div>
  <div class="q-desc">${notificationMarkdown(n.content.description)}</div>
  ${steps ? `<div class="q-label">Next steps</div><ul>${steps}</ul>` : ''}
  <div>${keywords}</div></div>
  <div class="s-context">Thread: ${escapeHtml(n.metadata.threadId)}</div></div></div>`;
}

/** The three messages of the picture's report, and the page that shows them (card rendered in the browser). */
export function chatPicture(): ChatPicture {
  const report = pictureReport();
  const options = { timeZone: 'Europe/Amsterdam', accountLabel: 'Bloem Hosting' };
  const alert = buildAlertMessage(report, options);
  const slack = renderSlackMessage(report, options);
  const teams = renderTeamsMessage(report, options);
  const chatbot = chatNotificationOf(alert, options);
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>
  body { margin: 0; font: 14px/1.45 "Segoe UI", "Helvetica Neue", Arial, sans-serif; background: #eef0f3; color: #1d1c1d; }
  .cols { display: grid; grid-template-columns: 1fr 1fr 1fr; gap: 14px; padding: 14px; }
  .col { background: #fff; border-radius: 8px; padding: 12px; overflow: hidden; box-shadow: 0 1px 3px #0002; }
  h1 { font-size: 13px; margin: 0 0 10px; color: #555; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
  h1 small { display: block; text-transform: none; font-weight: 400; letter-spacing: 0; }
  .s-msg { display: flex; gap: 8px; font-family: Lato, "Helvetica Neue", Arial, sans-serif; font-size: 13.5px; }
  .s-avatar { width: 34px; height: 34px; border-radius: 6px; background: #2eb67d; color: #fff; display: grid; place-items: center; font-weight: 700; flex: none; }
  .s-avatar.q { background: #7b3fe4; }
  .s-msg > div:last-child { min-width: 0; overflow-wrap: anywhere; }
  .s-name { font-weight: 900; } .s-name span { font-weight: 400; color: #616061; font-size: 11px; }
  .s-header { font-size: 17px; font-weight: 900; margin: 4px 0 6px; }
  .s-section { display: flex; justify-content: space-between; gap: 8px; margin: 4px 0; word-break: break-word; }
  .s-button { border: 1px solid #bbb; border-radius: 4px; padding: 2px 10px; font-weight: 700; font-size: 12.5px; height: fit-content; white-space: nowrap; }
  .s-actions { margin: 6px 0; }
  .s-context { color: #616061; font-size: 11.5px; margin-top: 6px; }
  code { font-family: Menlo, Consolas, monospace; font-size: 11.5px; color: #c01343; background: #f6f6f6; border: 1px solid #ddd; border-radius: 3px; padding: 0 2px; word-break: break-all; }
  .q-card { border-left: 4px solid #7b3fe4; padding: 2px 0 2px 10px; margin-top: 4px; }
  .q-title { font-weight: 900; margin-bottom: 4px; }
  .q-desc a, li a { color: #1264a3; } .q-label { font-weight: 700; margin-top: 6px; } ul { margin: 2px 0 6px; padding-left: 18px; }
  .q-kw { display: inline-block; background: #eee; border-radius: 10px; padding: 0 8px; margin: 2px 4px 0 0; font-size: 11.5px; }
  #teams { font-family: "Segoe UI", Arial, sans-serif; }
  #teams .ac-adaptiveCard { border: 1px solid #e1dfdd; border-radius: 4px; }
  #teams a, #teams .ac-textRun[role="link"] { color: #5b5fc7; }
  #teams button { background: #fff; border: 1px solid #d1d1d1; border-radius: 4px; padding: 5px 12px; font: 600 13px "Segoe UI", Arial, sans-serif; margin-top: 8px; }
  </style></head><body><div class="cols">
  <div class="col"><h1>Slack: incoming webhook<small>Block Kit as posted; drawn by an approximation of Slack's client</small></h1>${slackHtml(slack)}</div>
  <div class="col"><h1>Microsoft Teams: Workflows webhook<small>Adaptive Card ${escapeHtml(String(teams.attachments[0]?.content.version))} as posted; rendered by Microsoft's adaptivecards library</small></h1><div id="teams"></div></div>
  <div class="col"><h1>Amazon Q Developer (Slack or Teams)<small>custom notification as published; layout approximated</small></h1>${chatbotHtml(chatbot)}</div>
  </div><script type="application/json" id="card">${JSON.stringify(teams.attachments[0]?.content).replace(/</g, '\\u003c')}</script></body></html>`;
  return { slack, teams, chatbot, html };
}

/** What the picture's hash is taken of: the page, and the version of the library that draws the card. */
export const chatPictureSource = (picture: ChatPicture, libraryVersion: string): string =>
  sha256(`${picture.html}\n${libraryVersion}\n${NOW_ISO}`);

/** Teams' look for the Adaptive Cards renderer: its font and its colours (light theme). */
export const TEAMS_HOST_CONFIG = {
  fontFamily: 'Segoe UI, Helvetica Neue, Arial, sans-serif',
  supportsInteractivity: true,
  spacing: { small: 4, default: 8, medium: 14, large: 20, extraLarge: 26, padding: 14 },
  fontSizes: { small: 12, default: 14, medium: 16, large: 20, extraLarge: 24 },
  containerStyles: {
    default: {
      backgroundColor: '#FFFFFF',
      foregroundColors: {
        default: { default: '#242424', subtle: '#616161' },
        accent: { default: '#5B5FC7', subtle: '#4F52B2' },
        attention: { default: '#C4314B', subtle: '#A4262C' },
        warning: { default: '#835B00', subtle: '#6D4B00' },
        good: { default: '#237B4B', subtle: '#1B5E3A' },
      },
    },
  },
  actions: { actionsOrientation: 'horizontal', actionAlignment: 'left', buttonSpacing: 8, maxActions: 6 },
};
