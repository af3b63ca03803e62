import { dateFormat, describeDomainFinding, priceText } from '../alerts/alert';
import { displayDomain, safeText } from '../base/text';
import type { FindingPageOutcome } from '../decisions/finding-decision';
import { deadlineText, nextStep } from '../findings/next-step';
import { escapeHtml, renderPage, SECURITY_HEADERS, styleSource } from './restore-page';

/**
 * The finding page: the one link an alert gives a finding. What is wrong, the next step, and the
 * actions as large links (restore, snooze, acknowledge), each opening its own confirmation page;
 * then the facts. Laid out for a phone: the action is on the first screen. No script; every value
 * escaped.
 */

const STYLE = `.sev{font-size:.8rem;padding:.1rem .45rem;border-radius:3px;color:#fff;vertical-align:middle}
.sev-critical{background:#a40e26}.sev-warning{background:#b35c00}.sev-info{background:#5a6b7b}
.next{border-left:4px solid #0b5cad;background:#eef4fb;padding:.5rem .7rem;margin:1rem 0}
ul.acts{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.6rem;margin:1rem 0}
ul.acts a{display:inline-block;padding:.6rem 1.2rem;border-radius:4px;background:#0b5cad;color:#fff;text-decoration:none}
ul.acts a.quiet{background:#e8eef5;color:#0b3d73}dd{overflow-wrap:anywhere}
@media (max-width:40rem){body{margin:1rem auto}}`;

/** Headers of the finding page: the pages' own, with its stylesheet allowed by its hash. */
export const FINDING_PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...SECURITY_HEADERS,
  'Content-Security-Policy': (SECURITY_HEADERS['Content-Security-Policy'] ?? '').replace(
    /style-src ([^;]+);/,
    `style-src $1 ${styleSource(STYLE)};`,
  ),
};

const dateTime = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;

const ACTION_WORDS = {
  restore: 'Restore',
  snooze: 'Snooze',
  acknowledge: 'Acknowledge (let it go)',
} as const;

/** GET on a valid finding link for a domain the latest report has a finding for. */
export function renderFindingPage(
  outcome: Extract<FindingPageOutcome, { kind: 'show' }>,
  timeZone = 'UTC',
): string {
  const { finding: f, links } = outcome;
  const { day } = dateFormat(timeZone);
  const name = escapeHtml(displayDomain(f.domain_name));
  const acts = (['restore', 'snooze', 'acknowledge'] as const)
    .filter((a) => links[a])
    .map(
      (a) =>
        `<li><a${a === 'restore' ? '' : ' class="quiet"'} href="${escapeHtml(links[a] ?? '')}" rel="noreferrer">${ACTION_WORDS[a]}</a></li>`,
    )
    .join('');
  const r = f.registrant;
  const facts = [
    `<dt>Expiry date</dt><dd>${escapeHtml(day(f.date_expiry))}</dd>`,
    f.restore_by ? `<dt>Restore by</dt><dd>${escapeHtml(deadlineText(day, f.restore_by))}</dd>` : '',
    r
      ? `<dt>Registrant</dt><dd>${escapeHtml(safeText([r.name, r.company_name ? `(${r.company_name})` : '', r.email ? `<${r.email}>` : ''].filter(Boolean).join(' ') || 'unknown'))} [${escapeHtml(safeText(r.handle))}]</dd>`
      : '',
    f.price ? `<dt>Renewal price</dt><dd>${escapeHtml(priceText(f.price))}</dd>` : '',
    `<dt>These links expire</dt><dd>${escapeHtml(dateTime(outcome.linksExpire))}</dd>`,
  ].join('');
  return renderPage(
    `${displayDomain(f.domain_name)}: ${f.kind.replace(/_/g, ' ')}`,
    `<h1><code>${name}</code> <span class="sev sev-${escapeHtml(f.severity)}">${escapeHtml(f.severity)}</span></h1>
<p>${escapeHtml(describeDomainFinding(f, outcome.reportNow, day))}.</p>
<p class="next"><strong>Next step:</strong> ${escapeHtml(nextStep(f, day))}</p>
${acts ? `<ul class="acts">${acts}</ul><p class="note">Each opens a page that says what it will do; nothing happens until you press its button there.</p>` : ''}
${outcome.noSilence ? `<p class="note">${escapeHtml(outcome.noSilence)}</p>` : ''}
<dl>${facts}</dl>
<p class="note">As the latest report has it (scanned ${escapeHtml(day(outcome.reportNow))}).</p>`,
    STYLE,
  );
}
