import { dateFormat, describeDomainFinding, headline } from './alert';
import { type DomainFinding, type Finding, isDomainFinding, SEVERITIES, type Severity } from './classify';
import { escapeHtml, renderPage, SECURITY_HEADERS, styleSource } from './restore-page';
import type { Report } from './scan';
import { displayDomain, safeText } from './text';

/**
 * The report page: the latest full report, server-rendered. Findings grouped by severity in the
 * digest's words, the changes since the last scan, a filter (a GET form: no script at all), and a
 * timeline of the expiries of the next 90 days as inline SVG. Every value from the report is
 * escaped; the only styles are two inline sheets allowed by their hashes.
 */

const STYLE = `body{max-width:60rem;margin:1rem auto}
.sum{display:flex;flex-wrap:wrap;gap:.5rem;padding:0;list-style:none}.sum li{padding:.2rem .6rem;border-radius:3px;background:#eee}
.critical{border-left:4px solid #a40e26}.warning{border-left:4px solid #b35c00}.info{border-left:4px solid #5a6b7b}
ul.items{list-style:none;padding:0}ul.items li{margin:.5rem 0;padding:.4rem .6rem;background:#fafafa;overflow-wrap:anywhere}
.who{color:#555;font-size:.9rem}.tag{font-size:.8rem;background:#e8eef5;padding:0 .3rem;border-radius:3px;margin-left:.3rem}
.links a{margin-right:.8rem;font-size:.9rem}form.filter{display:flex;gap:.5rem;margin:1rem 0}
form.filter input[type=search]{flex:1;min-width:0;font:inherit;padding:.4rem}svg{width:100%;height:auto;display:block}
svg text{font:10px system-ui,sans-serif}.tl-critical{fill:#a40e26}.tl-warning{fill:#b35c00}.tl-info{fill:#5a6b7b}
.axis{stroke:#bbb}.tick{fill:#555}
@media (max-width:40rem){body{margin:.5rem auto;font-size:15px}h1{font-size:1.2rem}}`;

/** Headers of the report page: the restore pages' own, with this page's stylesheet allowed as well. */
export const REPORT_PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...SECURITY_HEADERS,
  'Content-Security-Policy': (SECURITY_HEADERS['Content-Security-Policy'] ?? '').replace(
    /style-src ([^;]+);/,
    `style-src $1 ${styleSource(STYLE)};`,
  ),
};

const DAY_MS = 86_400_000;
/** Days the timeline looks ahead. */
export const TIMELINE_DAYS = 90;
/** Rows drawn on the timeline; the rest are counted beneath it. */
const TIMELINE_ROWS = 60;
const WORDS: Record<Severity, string> = { critical: 'CRITICAL', warning: 'WARNING', info: 'INFO' };

const dayFormat = dateFormat('UTC').day;

export interface ReportPageInput {
  readonly report: Report;
  /** The filter's text, as typed. */
  readonly query?: string;
  /** The link's own token, so the filter form keeps the page's signature. */
  readonly token: Readonly<Record<string, string>>;
  readonly accountLabel?: string;
}

/** Text a finding is matched against by the filter. */
function searchable(f: Finding): string {
  if (!isDomainFinding(f))
    return `${f.handle} ${f.name} ${f.company_name} ${f.email} ${f.kind}`.toLowerCase();
  const r = f.registrant;
  return [displayDomain(f.domain_name), f.kind, f.severity, r?.handle, r?.name, r?.company_name, r?.email]
    .filter(Boolean)
    .join(' ')
    .toLowerCase();
}

function itemHtml(f: Finding, now: string): string {
  if (!isDomainFinding(f)) {
    return `<li class="${f.severity}"><strong>contact ${escapeHtml(safeText(f.handle))}</strong>: validation pending; the registry may suspend the domains it holds<div class="who">${escapeHtml(safeText([f.name, f.company_name, f.email].filter(Boolean).join(' · ')))}</div></li>`;
  }
  const tags = [
    f.snoozed_until ? `<span class="tag">snoozed until ${escapeHtml(dayFormat(f.snoozed_until))}</span>` : '',
    f.acknowledged ? '<span class="tag">acknowledged</span>' : '',
  ].join('');
  const r = f.registrant;
  const who = r
    ? `<div class="who">Registrant: ${escapeHtml(safeText([r.name, r.company_name ? `(${r.company_name})` : '', r.email ? `<${r.email}>` : ''].filter(Boolean).join(' ') || 'unknown'))} [${escapeHtml(safeText(r.handle))}]</div>`
    : '';
  const links = f.actions
    ? `<div class="links">${(['restore', 'snooze', 'acknowledge'] as const)
        .filter((a) => f.actions?.[a])
        .map(
          (a) =>
            `<a href="${escapeHtml(f.actions?.[a] ?? '')}" rel="noreferrer">${a === 'snooze' ? 'Snooze' : a === 'restore' ? 'Restore' : 'Acknowledge'}</a>`,
        )
        .join('')}</div>`
    : '';
  return `<li class="${f.severity}" data-domain="${escapeHtml(displayDomain(f.domain_name))}"><strong>${escapeHtml(displayDomain(f.domain_name))}</strong>${tags}: ${escapeHtml(describeDomainFinding(f, now, dayFormat))}${who}${links}</li>`;
}

/**
 * The timeline of expiries in the next {@link TIMELINE_DAYS} days: one row per domain, a mark on
 * its expiry date, coloured by severity; weekly ticks. Pure SVG, scaled to the screen.
 */
export function renderTimeline(report: Report): string {
  const start = Date.parse(report.now);
  const end = start + TIMELINE_DAYS * DAY_MS;
  const due = report.findings
    .filter((f): f is DomainFinding => isDomainFinding(f) && f.kind !== 'quarantine')
    .filter((f) => Date.parse(f.date_expiry) >= start && Date.parse(f.date_expiry) <= end)
    .sort((a, b) => Date.parse(a.date_expiry) - Date.parse(b.date_expiry));
  const rows = due.slice(0, TIMELINE_ROWS);
  // Narrow enough that 10-unit text stays readable when a phone scales the chart to its width.
  const left = 140;
  const width = 420;
  const rowHeight = 14;
  const top = 18;
  const height = top + Math.max(1, rows.length) * rowHeight + 6;
  const x = (ms: number) => left + ((ms - start) / (end - start)) * (width - left - 10);
  const ticks: string[] = [];
  for (let d = 0; d <= TIMELINE_DAYS; d += 14) {
    const at = x(start + d * DAY_MS).toFixed(1);
    ticks.push(
      `<line class="axis" x1="${at}" y1="${top - 4}" x2="${at}" y2="${height}"/><text class="tick" x="${at}" y="10" text-anchor="middle">${escapeHtml(d === 0 ? 'today' : `+${d}d`)}</text>`,
    );
  }
  const marks = rows.map((f, i) => {
    const y = top + i * rowHeight + rowHeight / 2;
    const cx = x(Date.parse(f.date_expiry)).toFixed(1);
    const name = displayDomain(f.domain_name);
    const label = name.length > 24 ? `${name.slice(0, 23)}…` : name;
    return `<g class="tl-${f.severity}"><title>${escapeHtml(`${name}: expires ${dayFormat(f.date_expiry)} (${f.severity})`)}</title><text x="${left - 6}" y="${y + 3}" text-anchor="end">${escapeHtml(label)}</text><circle cx="${cx}" cy="${y}" r="4"/></g>`;
  });
  const empty =
    rows.length === 0
      ? `<text x="${left}" y="${top + 10}">No expiries in the next ${TIMELINE_DAYS} days.</text>`
      : '';
  const more =
    due.length > rows.length
      ? `<p class="note">and ${due.length - rows.length} more expiries in the next ${TIMELINE_DAYS} days (see the list below)</p>`
      : '';
  return `<svg viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="tl-title"><title id="tl-title">Expiries in the next ${TIMELINE_DAYS} days</title>${ticks.join('')}${marks.join('')}${empty}</svg>${more}`;
}

interface ChangeLike {
  readonly domain_name?: unknown;
  readonly kind?: unknown;
  readonly before?: unknown;
  readonly after?: unknown;
}

function changesHtml(report: Report): string {
  const changes = (report as { changes?: unknown }).changes;
  if (!Array.isArray(changes)) return '';
  const items = (changes as ChangeLike[]).map((c) => {
    const name = typeof c.domain_name === 'string' ? displayDomain(c.domain_name) : '?';
    const kind = typeof c.kind === 'string' ? c.kind.replace(/_/g, ' ') : 'changed';
    const detail =
      c.before !== undefined || c.after !== undefined
        ? ` (${safeText(JSON.stringify(c.before) ?? '')} → ${safeText(JSON.stringify(c.after) ?? '')})`
        : '';
    return `<li><strong>${escapeHtml(name)}</strong>: ${escapeHtml(kind + detail)}</li>`;
  });
  return `<h2>Changes since the last scan (${items.length})</h2>${items.length ? `<ul class="items">${items.join('')}</ul>` : '<p>None.</p>'}`;
}

/** The whole page. */
export function renderReportPage(input: ReportPageInput): string {
  const { report } = input;
  const query = (input.query ?? '').trim().slice(0, 200);
  const needle = query.toLowerCase();
  const shown = needle ? report.findings.filter((f) => searchable(f).includes(needle)) : report.findings;
  const label = input.accountLabel ? ` (${safeText(input.accountLabel)})` : '';
  const hidden = Object.entries(input.token)
    .filter(([k]) => ['exp', 'kid', 'sig'].includes(k))
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  const sections = [...SEVERITIES]
    .reverse()
    .map((severity) => {
      const items = shown.filter((f) => f.severity === severity);
      if (items.length === 0) return '';
      return `<h2>${WORDS[severity]} (${items.length})</h2><ul class="items">${items.map((f) => itemHtml(f, report.now)).join('')}</ul>`;
    })
    .join('');
  const filtered = needle
    ? `<p>${shown.length} of ${report.findings.length} findings match “${escapeHtml(safeText(query))}”.</p>`
    : '';
  const problems = report.problems.length
    ? `<h2>Unreadable records (${report.problems.length})</h2><p>They could not be read and were not checked; the JSON report lists them.</p>`
    : '';
  return renderPage(
    `domain-sentinel report${label}`,
    `<h1>domain-sentinel${escapeHtml(label)}</h1>
<p>${escapeHtml(headline(report))}. Scanned ${escapeHtml(dayFormat(report.now))} (${escapeHtml(report.now.replace('T', ' ').slice(0, 16))} UTC).</p>
<ul class="sum"><li class="critical">${report.summary.critical} critical</li><li class="warning">${report.summary.warning} warning</li><li class="info">${report.summary.info} info</li></ul>
<h2>Expiries in the next ${TIMELINE_DAYS} days</h2>${renderTimeline(report)}
${changesHtml(report)}
<form class="filter" method="get" action="">${hidden}<input type="search" name="q" value="${escapeHtml(query)}" placeholder="Filter: domain, registrant, kind" aria-label="Filter findings"><button type="submit">Filter</button></form>
${filtered}${sections || '<p>No findings.</p>'}${problems}`,
    STYLE,
  );
}
