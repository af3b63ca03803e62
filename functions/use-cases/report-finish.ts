import { alertView } from '../core/memory/actions';
import type { ReportStore } from '../core/memory/report-store';
import type { Report } from '../core/scan/scan';

/** What a scan does with its report once the account is read and compared: the report kept, the alert view made. */
export interface FinishInput<R extends Report> {
  /** With a state store, already compared (silenced findings marked, see compareMemory). */
  readonly report: R;
  /** Domains a snooze or acknowledgement keeps out of the alert (CompareResult.silenced); none without state. */
  readonly silenced?: ReadonlySet<string>;
  /** Where the report page and the calendar feed read the report; absent, it is not kept. */
  readonly reports?: ReportStore;
}

export interface Finished<R extends Report> {
  /** Every finding, the silenced ones marked `snoozed_until` / `acknowledged`: the JSON report, the page. */
  readonly report: R;
  /** The report alerts are made of: silenced findings left out, counted in `silenced`. */
  readonly alert: R & { silenced?: number };
}

/**
 * Keeps the report where the report page reads it, and gives the view alerts are made of. The
 * report is kept on a dry run too: it describes the account as read, and the `report_url` printed
 * with it must lead to it.
 */
export async function finishReport<R extends Report>(input: FinishInput<R>): Promise<Finished<R>> {
  if (input.reports) await input.reports.put(input.report);
  return { report: input.report, alert: alertView(input.report, input.silenced ?? new Set()) };
}
