import { dateFormat, describeDomainFinding } from '../alerts/alert';
import { displayDomain } from '../base/text';
import { type ActionOutcome, findingWords } from '../decisions/action-decision';
import { LAST_DAYS } from '../findings/quarantine-periods';
import { silenceEndsAt } from '../memory/actions';
import { escapeHtml, renderPage } from './restore-page';

/**
 * The confirmation pages of snooze and acknowledge: what the domain's problem is, what the action
 * will do, and one form that posts to the same URL. No script; every value escaped.
 */

const day = dateFormat('UTC').day;
const dateTime = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;

/** GET on a valid snooze or acknowledge link for a domain with a finding. */
export function renderActionConfirmPage(
  domain: string,
  confirm: NonNullable<ActionOutcome['confirm']>,
  now: number,
): string {
  const named = displayDomain(domain);
  const shown = escapeHtml(named);
  const what = escapeHtml(describeDomainFinding(confirm.finding, new Date(now).toISOString(), day));
  // Said before the button: the link was sent for something else than what the button acts on now.
  const changed = confirm.sentFor
    ? `<p class="bad">This link was sent when <code>${shown}</code> was ${escapeHtml(findingWords(confirm.sentFor))}. It is now ${escapeHtml(findingWords(confirm.finding))}: the button below acts on it as it is now.</p>`
    : '';
  const f = confirm.finding;
  // A quarantine's deadline is what the person weighs a silence against: shown, with when it ends.
  const restoreBy =
    f.kind !== 'quarantine'
      ? ''
      : `<dt>Restore by</dt><dd>${
          f.restore_by && typeof f.days_to_restore === 'number'
            ? `${escapeHtml(dateTime(Date.parse(f.restore_by)))} (${f.days_to_restore} day${f.days_to_restore === 1 ? '' : 's'} left)`
            : 'unknown'
        }</dd>`;
  const facts = `${changed}<dl><dt>Domain</dt><dd><code>${shown}</code></dd><dt>Now</dt><dd>${what} (${escapeHtml(f.severity)})</dd>${restoreBy}<dt>This link expires</dt><dd>${escapeHtml(dateTime(confirm.linkExpires))}</dd></dl>`;
  const ends = silenceEndsAt(f);
  const lastDays =
    ends === null
      ? ''
      : `<p class="bad">Its last ${LAST_DAYS} days to restore begin ${escapeHtml(dateTime(ends))}: from then on it is alerted daily, whatever you choose here.</p>`;
  const note =
    '<p class="note">Nothing happens until you press the button: opening this page (as mail scanners do) changes nothing.</p>';
  const action = escapeHtml(confirm.formAction);
  if (confirm.action === 'snooze') {
    const choices = (confirm.days?.choices ?? [])
      .map(
        (d) =>
          `<label><input type="radio" name="days" value="${d}"${d === confirm.days?.chosen ? ' checked' : ''}> ${d} day${d === 1 ? '' : 's'}</label>`,
      )
      .join(' ');
    return renderPage(
      `Snooze ${named}?`,
      `<h1>Snooze <code>${shown}</code>?</h1>${facts}
<p>Alerts leave it out for the days you choose. It stays in the report, and comes back at once if it gets worse (for example enters quarantine).</p>${lastDays}
<form method="post" action="${action}"><fieldset><legend>Snooze for</legend>${choices}</fieldset><p><button type="submit">Snooze ${shown}</button></p></form>${note}`,
    );
  }
  return renderPage(
    `Acknowledge ${named}?`,
    `<h1>Acknowledge <code>${shown}</code>?</h1>${facts}
<p>“We let this one go”: alerts leave it out until its expiry date, status or auto-renew changes. It stays in the report.</p>${lastDays}
<form method="post" action="${action}"><button type="submit">Acknowledge ${shown}</button></form>${note}`,
  );
}

/** POST on a snooze or acknowledge link whose domain's finding changed: what it is now, and links for that. */
export function renderFindingChangedPage(
  outcome: ActionOutcome & { readonly changed: NonNullable<ActionOutcome['changed']> },
): string {
  const { links } = outcome.changed;
  return renderPage(
    outcome.title,
    `<h1 class="bad">${escapeHtml(outcome.title)}</h1><p>${escapeHtml(outcome.message)}</p>
<ul><li><a href="${escapeHtml(links.snooze)}">Snooze it as it is now</a></li><li><a href="${escapeHtml(links.acknowledge)}">Acknowledge it as it is now</a></li></ul>
<p class="note">Each link opens a page that says what it will do; nothing happens until you press its button.</p>`,
  );
}
