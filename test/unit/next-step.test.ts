import { describe, expect, it } from 'vitest';
import { chatNotificationOf } from '../../functions/core/alerts/chat';
import { renderDigest } from '../../functions/core/alerts/digest';
import { buildAlertMessage, reportJsonOf } from '../../functions/core/alerts/message';
import type { ContactFinding, DomainFinding, Finding } from '../../functions/core/findings/classify';
import { DOMAIN_FINDING_KINDS } from '../../functions/core/findings/classify';
import {
  CHANGE_NEXT_STEPS,
  changeNextStep,
  FINDING_NEXT_STEPS,
  nextStep,
} from '../../functions/core/findings/next-step';
import { NEXT_STEP_TABLE } from '../../functions/core/findings/next-step-docs';
import { prettyReportJson } from '../../functions/core/memory/report-json';
import { type ChangeKind, WATCHED, WATCHED_NAMES } from '../../functions/core/memory/state';
import { renderFindingPage } from '../../functions/core/pages/finding-page';
import { renderReportPage } from '../../functions/core/pages/report-page';
import { escapeHtml } from '../../functions/core/pages/restore-page';
import { domainFinding, NOW_ISO, reportOf } from '../support/report';

/** Every ChangeKind, in the table's order: what the next-step table must cover. */
const CHANGE_KINDS: readonly ChangeKind[] = [
  'left_account',
  'returned',
  ...WATCHED_NAMES.flatMap((name) => {
    const change = (WATCHED[name] as { readonly change?: { readonly kind: ChangeKind } }).change;
    return change ? [change.kind] : [];
  }),
];

/** One finding of every kind (and both sides of expiring), as a scan reports them. */
const FINDINGS: Record<string, Finding> = {
  quarantine: domainFinding('lost.nl', 'quarantine', 'critical', -30, {
    date_deleted: '2026-11-01T06:00:00.000Z',
    restore_by: '2026-12-11T06:00:00.000Z',
    days_to_restore: 19,
  }),
  quarantine_passed: domainFinding('late.com', 'quarantine', 'critical', -60, {
    date_deleted: '2026-10-01T06:00:00.000Z',
    restore_by: '2026-10-31T06:00:00.000Z',
    days_to_restore: -22,
  }),
  expired: domainFinding('gone.de', 'expired', 'critical', -2),
  renewal_failed: domainFinding('unpaid.com', 'renewal_failed', 'critical', 9, {
    auto_renew: true,
    date_renewal: '2026-11-19T06:00:00.000Z',
  }),
  expiring: domainFinding('soon.nl', 'expiring', 'critical', 3),
  expiring_renewing: domainFinding('renews.nl', 'expiring', 'info', 12, { auto_renew: true }),
  auto_renew_off: domainFinding('later.nl', 'auto_renew_off', 'info', 120),
  contact_pending_validation: {
    handle: 'C9',
    kind: 'contact_pending_validation',
    severity: 'warning',
    name: 'Bram Bos',
    company_name: '',
    email: 'bram@example.nl',
  } satisfies ContactFinding,
};

/** The line each kind must end with: what to do, and by when. */
const EXPECTED: Record<string, string> = {
  quarantine:
    "Restore it by 11 Dec 2026 06:00 UTC (19 days left) through its link, with the registrant's consent; a restore is paid.",
  quarantine_passed:
    "Restore it now through its link, or check it in the reseller's control panel: its restore-by date 31 Oct 2026 06:00 UTC has passed and the registry may release it at any moment.",
  expired:
    "Renew it now in the reseller's control panel: it expired 20 Nov 2026; the grace left is not stated by the API, and once cancelled, .de allows 30 days to restore it (paid).",
  renewal_failed:
    "Check the account's balance and payment method in the reseller's control panel, then renew it before 1 Dec 2026: the renewal due 19 Nov 2026 did not happen.",
  expiring: "Renew it, or turn auto-renew on, in the reseller's control panel before 25 Nov 2026.",
  expiring_renewing:
    "Nothing to do if the renewal goes through: keep the account's balance and payment method able to pay before 4 Dec 2026.",
  auto_renew_off:
    "Decide before 22 Mar 2027: turn auto-renew on in the reseller's control panel to keep it, or let it go.",
  contact_pending_validation:
    'Ask <bram@example.nl> to confirm the validation e-mail now: until then the registry may suspend the domains it holds (for gTLDs within 15 days of the request).',
};

const token = { exp: '1', kid: 'abcd1234', sig: 'x'.repeat(43) };

describe('the next step of every finding kind', () => {
  it('has a row for every kind classify and memory report, and the docs table lists them all', () => {
    expect(Object.keys(FINDING_NEXT_STEPS).sort()).toEqual(
      [...DOMAIN_FINDING_KINDS, 'contact_pending_validation'].sort(),
    );
    expect(Object.keys(CHANGE_NEXT_STEPS).sort()).toEqual([...CHANGE_KINDS].sort());
    expect(NEXT_STEP_TABLE.map((row) => row.kind)).toEqual([
      ...Object.keys(FINDING_NEXT_STEPS),
      ...Object.keys(CHANGE_NEXT_STEPS),
    ]);
  });

  it('starts every sentence of the docs words with a capital, however the text around a constant reads', () => {
    const lowerStarts = NEXT_STEP_TABLE.flatMap((row) =>
      [row.doc.how, row.doc.when]
        .flatMap((text) => text.match(/[.!?] [a-z][^ ]{0,40} [^ ]{0,40}/g) ?? [])
        .map((start) => `${row.kind}: ${start}`),
    );
    expect(lowerStarts).toEqual([]);
  });

  for (const [name, finding] of Object.entries(FINDINGS)) {
    describe(name, () => {
      const expected = EXPECTED[name] as string;

      it('says what to do and by when', () => {
        expect(nextStep(finding)).toBe(expected);
      });

      it('ends the finding in the digest', () => {
        const report = reportOf([finding]);
        const digest = renderDigest(report);
        if (finding.severity === 'info') {
          // Info is summarised in the digest, not listed: its step is on the page and in the JSON.
          expect(digest).not.toContain('Next:');
          return;
        }
        const lines = digest.split('\n');
        const at = lines.findIndex((l) => l.startsWith('- ') && l.includes(': '));
        const item = lines.slice(at, lines.indexOf('', at));
        expect(item).toContain(`  Next: ${expected}`);
      });

      it('ends the finding on the report page and opens its own page with it', () => {
        const html = renderReportPage({ report: reportOf([finding]), token });
        if ('domain_name' in finding) {
          expect(html).toContain(`<div class="next">Next: ${escapeHtml(expected)}</div>`);
          const page = renderFindingPage({
            kind: 'show',
            status: 200,
            finding: finding as DomainFinding,
            reportNow: NOW_ISO,
            links: {},
            linksExpire: Date.parse(NOW_ISO) + 86_400_000,
          });
          expect(page).toContain(`<strong>Next step:</strong> ${escapeHtml(expected)}</p>`);
        } else expect(html).toContain(`Next: ${escapeHtml(expected)}`);
      });

      it('is the next_step of the finding in the JSON: the message, the printed report and chat', () => {
        const report = reportOf([finding]);
        const alert = buildAlertMessage(report);
        expect(JSON.parse(reportJsonOf(alert)).findings[0].next_step).toBe(expected);
        expect(JSON.parse([...prettyReportJson(report)].join('')).findings[0].next_step).toBe(expected);
        if (finding.severity !== 'info')
          expect(chatNotificationOf(alert).content.description).toContain(
            `  Next: ${expected.replace(/[<>@]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`,
          );
      });
    });
  }
});

describe('the next step of every change kind', () => {
  for (const kind of CHANGE_KINDS) {
    it(`${kind}: ends the change in the digest, on the page and in the JSON`, () => {
      const change = { domain_name: 'shop.nl', kind, severity: 'warning', before: null, after: null };
      const expected = changeNextStep(change);
      expect(expected).toMatch(/^[A-Z].+\.$/);
      expect(expected).toContain(kind === 'premium_price_changed' ? 'price' : 'reseller');
      const report = { ...reportOf([]), changes: [change], resolved: [] };
      expect(renderDigest(report)).toContain(`[warning]\n  Next: ${expected}`);
      expect(renderReportPage({ report, token })).toContain(
        `<div class="next">Next: ${escapeHtml(expected)}</div>`,
      );
      expect(JSON.parse([...prettyReportJson(report)].join('')).changes[0].next_step).toBe(expected);
      expect(JSON.parse(reportJsonOf(buildAlertMessage(report))).changes[0].next_step).toBe(expected);
    });
  }
});
