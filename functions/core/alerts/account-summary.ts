import type { AccountSummary } from '../scan/accounts';
import type { Report } from '../scan/scan';
import { criticalCount } from './alert';

/**
 * An account's summary from its report: its critical items as its alert counted them (a record that
 * says quarantine, a domain that left the account: not findings, but critical), so the overview
 * never shows 0 beside an alert that said 1.
 */
export function accountSummaryOf(report: Report, account: string, label?: string): AccountSummary {
  return {
    account,
    ...(label && label !== account ? { label } : {}),
    generated_at: report.generated_at,
    summary: { critical: criticalCount(report), warning: report.summary.warning, info: report.summary.info },
    problems: report.problems.length,
    domains_scanned: report.stats.domains_scanned,
    ...(report.source?.incomplete === undefined ? {} : { incomplete: true as const }),
  };
}
