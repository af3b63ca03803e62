import type { DomainFinding, Finding, Severity } from '../../functions/core/findings/classify';
import type { Report } from '../../functions/core/scan/scan';

export const NOW_ISO = '2026-11-22T06:00:00.000Z';
const DAY = 86_400_000;

/** A domain finding with sensible defaults, `days` from NOW. */
export function domainFinding(
  name: string,
  kind: DomainFinding['kind'],
  severity: Severity,
  days: number,
  extra: Partial<DomainFinding> = {},
): DomainFinding {
  return {
    domain_name: name,
    kind,
    severity,
    date_expiry: new Date(Date.parse(NOW_ISO) + days * DAY).toISOString(),
    days_left: days,
    auto_renew: false,
    registrant: { handle: 'C1', name: 'Anna de Vries', company_name: 'Bloem BV', email: 'anna@example.nl' },
    ...extra,
  };
}

/** A report around the given findings, counted as a scan would count them. */
export function reportOf(findings: Finding[], problems: Report['problems'] = []): Report {
  const summary = { critical: 0, warning: 0, info: 0 };
  for (const f of findings) summary[f.severity]++;
  return {
    generated_at: NOW_ISO,
    now: NOW_ISO,
    source: { base_url: 'https://api.example.test', mode: 'full', read: 'full' },
    policy: { expiry_days: 30, critical_days: 7 },
    stats: { domains_scanned: 1200, contacts_scanned: 60, requests: 14, duration_ms: 812 },
    summary,
    findings,
    problems,
  };
}
