import { describe, expect, it } from 'vitest';
import { DEADLINES_LISTED, DomainFindingShape, viewOf } from '../../functions/core/memory/report-view';
import { renderReportPage } from '../../functions/core/pages/report-page';
import type { Problem } from '../../functions/core/reseller/client';
import { keptRecord, unreadable } from '../support/kept-records';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

const kept = (name: string) => keptRecord(name);

describe('the report view of kept quarantines with no finding', () => {
  it('carries every kept quarantine behind a hundred unreadable records, and the page counts those beyond the deadlines listed', () => {
    const keptOnes = Array.from({ length: DEADLINES_LISTED + 3 }, (_, i) => kept(`kept-${i}.nl`));
    const report = reportOf([], [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes]);
    const view = viewOf(report, { purpose: 'page' });
    expect(view.problems.filter((p) => p.kept_quarantine)).toHaveLength(DEADLINES_LISTED + 3);
    expect(view.view?.urgentLeft).toBeUndefined();
    expect(view.view?.timeline?.total).toBe(DEADLINES_LISTED + 3);
    const html = renderReportPage({ report: view, token: {} });
    expect(html).toContain(`<h2>Restore deadlines (${DEADLINES_LISTED + 3})</h2>`);
    expect(html).toContain('and 3 more');
  });

  it('carries the one a filter names exactly, for the finding page to find', () => {
    const keptOnes = Array.from({ length: DEADLINES_LISTED + 3 }, (_, i) => kept(`kept-${i}.nl`));
    const report = reportOf([], [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes]);
    const view = viewOf(report, { purpose: 'page', query: `kept-${DEADLINES_LISTED + 1}.nl` });
    expect(view.problems.map((p) => p.key)).toContain(`kept-${DEADLINES_LISTED + 1}.nl`);
  });

  it('carries a kept quarantine a filter matches by the words a quarantine finding is found by', () => {
    const report = reportOf([], [...Array.from({ length: 150 }, (_, i) => unreadable(i)), kept('late.nl')]);
    for (const query of ['quarantine', 'critical'])
      expect(viewOf(report, { purpose: 'page', query }).problems.map((p) => p.key)).toContain('late.nl');
    expect(viewOf(report, { purpose: 'page', query: 'expiring' }).problems.map((p) => p.key)).not.toContain(
      'late.nl',
    );
  });
});

describe('the report view of kept quarantines, hostile', () => {
  const DAY = 86_400_000;
  const keptBy = (name: string, days: number): Problem => ({
    ...kept(name),
    restore_by: new Date(Date.parse('2026-11-22T06:00:00.000Z') + days * DAY).toISOString(),
  });

  // A view that carries 20 kept quarantines after the first hundred records (KEPT_CARRIED, lowered).
  const BOUND = 2 * DEADLINES_LISTED;

  it('carries the soonest restore deadlines of kept quarantines, not the first in the report', () => {
    // The scan sorts problem records by resource and page, not by deadline: the soonest one comes last.
    const keptOnes = Array.from({ length: DEADLINES_LISTED + 5 }, (_, i) => keptBy(`kept-${i}.nl`, 60 - i));
    const report = reportOf([], [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes]);
    const view = viewOf(report, { purpose: 'page' }, BOUND);
    expect(view.problems.map((p) => p.key)).toContain(`kept-${DEADLINES_LISTED + 4}.nl`);
    const html = renderReportPage({ report: view, token: {} });
    const listed = html.slice(html.indexOf('<ul class="items deadlines">'));
    expect(listed.indexOf(`kept-${DEADLINES_LISTED + 4}.nl`)).toBeGreaterThan(0);
    expect(listed).not.toContain('<strong>kept-0.nl</strong>');
    expect(view.view?.urgentLeft?.quarantine).toBe(5);
  });

  it('carries the soonest kept deadlines again when its stored view is read back', () => {
    const keptOnes = Array.from({ length: DEADLINES_LISTED + 5 }, (_, i) => keptBy(`kept-${i}.nl`, 60 - i));
    const report = reportOf([], [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes]);
    const view = viewOf(report, { purpose: 'page' }, BOUND);
    const again = viewOf(view, { purpose: 'page' }, BOUND);
    expect(again.problems.map((p) => p.key)).toEqual(view.problems.map((p) => p.key));
    expect(again.view?.urgentLeft?.quarantine).toBe(5);
  });

  it('carries the one a filter names in another spelling of the name (case, trailing dot, IDN)', () => {
    const keptOnes = Array.from({ length: DEADLINES_LISTED + 3 }, (_, i) => kept(`kept-${i}.nl`));
    const odd = [kept('Late-Kept.NL.'), kept('bücher-kept.nl')];
    const report = reportOf(
      [],
      [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes, ...odd],
    );
    expect(viewOf(report, { purpose: 'page', query: 'late-kept.nl' }).problems.map((p) => p.key)).toContain(
      'Late-Kept.NL.',
    );
    expect(
      viewOf(report, { purpose: 'page', query: 'xn--bcher-kept-9db.nl' }).problems.map((p) => p.key),
    ).toContain('bücher-kept.nl');
  });

  it('carries kept quarantines a filter matches by part of the name, as the note beneath the deadlines says', () => {
    const keptOnes = Array.from({ length: DEADLINES_LISTED + 5 }, (_, i) => kept(`kept-${i}.nl`));
    const report = reportOf([], [...Array.from({ length: 150 }, (_, i) => unreadable(i)), ...keptOnes]);
    const view = viewOf(report, { purpose: 'page', query: `kept-${DEADLINES_LISTED + 4}` });
    expect(view.problems.map((p) => p.key)).toContain(`kept-${DEADLINES_LISTED + 4}.nl`);
    expect(view.view?.urgentLeft?.quarantine).toBe(DEADLINES_LISTED + 4);
  });

  it('stores a kept restore-by on the timeline as the previous version reads a row, so a rollback still shows the page', () => {
    const view = viewOf(reportOf([], [keptBy('kept.nl', 5)]), { purpose: 'page' });
    const stored = JSON.parse(JSON.stringify(view.view?.timeline?.rows));
    // The previous version checked every stored row as a domain finding (DomainFindingShape).
    expect(stored).toHaveLength(1);
    expect(DomainFindingShape.safeParse(stored[0].finding).success).toBe(true);
    // And this one reads it back as the kept deadline it is.
    const again = viewOf(view, { purpose: 'page' });
    expect(again.view?.timeline?.rows[0]?.finding).toMatchObject({
      domain_name: 'kept.nl',
      kept_quarantine: true,
    });
  });
});

describe('the restore deadlines the page lists, on their last day', () => {
  const HOUR = 3_600_000;
  const at = (hours: number) => new Date(Date.parse(NOW_ISO) + hours * HOUR).toISOString();

  it('lists a kept quarantine ending in an hour before quarantines ending later that day', () => {
    // Twenty quarantines read as such, all on their last day (0 days left), ending in 20 hours.
    const read = Array.from({ length: DEADLINES_LISTED }, (_, i) =>
      domainFinding(`read-${i}.nl`, 'quarantine', 'critical', -30, {
        date_deleted: at(-40 * 24 + 20),
        restore_by: at(20),
        days_to_restore: 0,
      }),
    );
    const report = reportOf(read, [keptRecord('soonest.nl', { restore_by: at(1) })]);
    for (const shown of [report, viewOf(report, { purpose: 'page' })]) {
      const html = renderReportPage({ report: shown, token: {} });
      const listed = html.slice(
        html.indexOf('<ul class="items deadlines">'),
        html.indexOf('</ul>', html.indexOf('<ul class="items deadlines">')),
      );
      expect(listed).toContain('<strong>soonest.nl</strong>');
      expect(listed.indexOf('soonest.nl')).toBeLessThan(listed.indexOf('read-0.nl'));
    }
  });
});
