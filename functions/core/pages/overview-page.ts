import { safeText } from '../base/text';
import type { AccountSummary } from '../scan/accounts';
import { escapeHtml, renderPage, SECURITY_HEADERS, styleSource } from './restore-page';

/**
 * The overview page of a deployment that scans several accounts: one line per account with its
 * counts by severity, its last completed scan and a link to its report page (signed for that
 * account). Server-rendered without a script; every value escaped.
 */

const STYLE = `body{max-width:60rem;margin:1rem auto}table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd;overflow-wrap:anywhere}
td.n{text-align:right;font-variant-numeric:tabular-nums}.critical{color:#a40e26;font-weight:600}
.none{color:#555}.name{color:#555;font-size:.85rem}`;

/** Headers of the overview page: the restore pages' own, with this page's stylesheet allowed as well. */
export const OVERVIEW_PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...SECURITY_HEADERS,
  'Content-Security-Policy': (SECURITY_HEADERS['Content-Security-Policy'] ?? '').replace(
    /style-src ([^;]+);/,
    `style-src $1 ${styleSource(STYLE)};`,
  ),
};

/** One account's line: its summary (null before its first scan, 'unreadable' when it cannot be read). */
export interface OverviewLine {
  readonly account: string;
  readonly label?: string;
  readonly summary: AccountSummary | null | 'unreadable';
  /** The account's report page, relative to the overview's own URL. */
  readonly reportHref: string;
}

const time = (iso: string) => `${iso.replace('T', ' ').slice(0, 16)} UTC`;

function lineHtml(line: OverviewLine): string {
  const label = line.label && line.label !== line.account ? safeText(line.label) : undefined;
  const who = label
    ? `${escapeHtml(label)} <span class="name">${escapeHtml(line.account)}</span>`
    : escapeHtml(line.account);
  const link = `<a href="${escapeHtml(line.reportHref)}">report</a>`;
  const s = line.summary;
  if (s === null || s === 'unreadable')
    return `<tr><td>${who}</td><td colspan="5" class="none">${s === null ? 'no scan has completed yet' : 'its last scan’s summary could not be read'}</td><td>${link}</td></tr>`;
  const critical = s.summary.critical > 0 ? ` class="n critical"` : ' class="n"';
  return `<tr><td>${who}</td><td${critical}>${s.summary.critical}</td><td class="n">${s.summary.warning}</td><td class="n">${s.summary.info}</td><td class="n">${s.problems}</td><td>${escapeHtml(time(s.generated_at))}${s.incomplete ? ' <strong class="critical">incomplete</strong>' : ''}</td><td>${link}</td></tr>`;
}

/** The whole page. */
export function renderOverviewPage(lines: readonly OverviewLine[]): string {
  const critical = lines.reduce(
    (sum, l) => sum + (l.summary && l.summary !== 'unreadable' ? l.summary.summary.critical : 0),
    0,
  );
  return renderPage(
    'domain-sentinel accounts',
    `<h1>domain-sentinel: ${lines.length} account${lines.length === 1 ? '' : 's'}</h1>
<p>${critical} critical item${critical === 1 ? '' : 's'} across all accounts. Each line is the account’s last completed scan.</p>
<table><thead><tr><th>account</th><th>critical</th><th>warning</th><th>info</th><th>problem records</th><th>last scan</th><th></th></tr></thead>
<tbody>${lines.map(lineHtml).join('')}</tbody></table>`,
    STYLE,
  );
}
