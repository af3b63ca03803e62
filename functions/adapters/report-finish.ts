import { type ActionStore, alertView, applyActions } from '../core/actions';
import type { ReportStore } from '../core/report-store';
import type { Report } from '../core/scan';
import { normalizeDomainName } from '../core/text';

/** What a scan does with its report once the account is read: snoozes applied, the report kept. */
export interface FinishInput<R extends Report> {
  readonly report: R;
  /** Snoozes and acknowledgements; absent, nothing is silenced. */
  readonly actions?: ActionStore;
  /** Where the report page and the calendar feed read the report; absent, it is not kept. */
  readonly reports?: ReportStore;
  /** Epoch ms the actions are judged at (the scan's `now`). */
  readonly now: number;
  /** A dry run never writes the state: lapsed actions stay until a real scan removes them. */
  readonly dryRun: boolean;
}

export interface Finished<R extends Report> {
  /** Every finding, the silenced ones marked `snoozed_until` / `acknowledged`: the JSON report, the page. */
  readonly report: R;
  /** The report alerts are made of: silenced findings left out, counted in `silenced`. */
  readonly alert: R & { silenced?: number };
  readonly lapsed: number;
}

/**
 * Applies the snoozes and acknowledgements to a report, removes the ones that lapsed, and keeps
 * the report where the report page reads it. The report is kept on a dry run too: it describes
 * the account as read, and the `report_url` printed with it must lead to it.
 */
export async function finishReport<R extends Report>(input: FinishInput<R>): Promise<Finished<R>> {
  let report = input.report;
  let alert: R & { silenced?: number } = report;
  let lapsed = 0;
  if (input.actions) {
    const actions = await input.actions.load();
    const applied = applyActions(report, actions, input.now, normalizeDomainName);
    report = applied.report as R;
    alert = alertView(report, applied.silenced);
    lapsed = applied.lapsed.length;
    if (!input.dryRun && applied.lapsed.length) await input.actions.lapse(applied.lapsed, actions);
  }
  if (input.reports) await input.reports.put(report);
  return { report, alert, lapsed };
}
