import { keyReadRefusal, UNKNOWN_KEY_TITLE, unknownKeyMessage } from '../links/link-gate';
import { ACCOUNT_SUBJECT, type ReadOnlyAction, type SigningKey, verifyLink } from '../links/links';
import { DamagedReportError, type WholeReport } from '../memory/report-store';
import type { Report } from '../scan/scan';

/**
 * The read-only links (report page, calendar feed), decided in the core like restore: a valid,
 * unexpired link for the action reads the latest report; nothing ever changes. HEAD is decided as
 * GET is (RFC 9110 9.3.2), so it answers the status GET would: 404 before the first report, 503
 * when it cannot be read; the handler leaves the body out.
 */

const GENERIC_FAILURE =
  'This service is not configured correctly. The operator has been told; please try again later.';

export interface ViewInput {
  readonly action: ReadOnlyAction;
  readonly method: string;
  readonly token: Readonly<Record<string, string | undefined>>;
  /** Epoch ms. */
  readonly now: number;
  readonly signingKeys: () => Promise<readonly SigningKey[]>;
  /** Read only once the link is proven valid. */
  readonly latestReport: () => Promise<Report | null>;
}

export type ViewOutcome =
  | { readonly kind: 'show'; readonly status: 200; readonly report: Report }
  | {
      readonly kind:
        | 'method_not_allowed'
        | 'malformed'
        | 'bad_signature'
        | 'unknown_key'
        | 'link_expired'
        | 'no_report'
        | 'report_unreadable'
        | 'store_failed'
        | 'secret_unavailable'
        | 'misconfigured';
      readonly status: number;
      readonly title: string;
      readonly message: string;
      readonly detail?: string;
    };

/** Decides what a request to a report or calendar link answers. Never throws. */
export async function decideView(input: ViewInput): Promise<ViewOutcome> {
  const checked = await checkViewLink(input);
  if (checked) return checked;
  let report: Report | null;
  try {
    report = await input.latestReport();
  } catch (error) {
    if (error instanceof DamagedReportError) return unreadableReport(error.message);
    return failed(error);
  }
  if (!report) return noReport();
  return { kind: 'show', status: 200, report };
}

/** Every answer but the report itself. */
export type ViewRefusal = Exclude<ViewOutcome, { readonly kind: 'show' }>;

const noReport = (): ViewRefusal => ({
  kind: 'no_report',
  status: 404,
  title: 'No report yet',
  message: 'No scan has stored a report yet. The next scan will.',
});

/** What `report.json` answers: the whole report (its text, or where to fetch it), or why not. */
export type WholeReportOutcome =
  | {
      readonly kind: 'whole';
      readonly status: 200 | 303;
      /** Where the report is (303). */
      readonly url?: string;
      /** The report's text (200 to a GET; a HEAD reads none). */
      readonly text?: string;
    }
  | (ViewRefusal & { readonly url?: undefined; readonly text?: undefined })
  | {
      readonly kind: 'replaced' | 'not_kept';
      readonly status: 410;
      readonly title: string;
      readonly message: string;
      readonly url?: undefined;
      readonly text?: undefined;
    };

/**
 * `report.json`: a valid report link (the same signature as the page) reads the whole stored
 * report; `of` (the report the alert was made from) must be one the store still keeps (S3: under
 * `reports/`; a folder: the latest alone), else 410. What it answers is that report, never a newer
 * one a scan put meanwhile. Never throws.
 */
export async function decideWholeReport(
  input: Omit<ViewInput, 'action' | 'latestReport'> & {
    /** The report `of` names where the store still keeps it, else the latest (see ReportStore.whole). */
    readonly whole: (of?: string) => Promise<WholeReport | null>;
  },
): Promise<WholeReportOutcome> {
  const checked = await checkViewLink({ ...input, action: 'report' });
  if (checked) return checked;
  let whole: WholeReport | null;
  try {
    whole = await input.whole(input.token.of);
  } catch (error) {
    if (error instanceof DamagedReportError) return unreadableReport(error.message);
    return failed(error);
  }
  if (!whole) return noReport();
  const of = input.token.of;
  if (of !== undefined && of !== whole.generated_at)
    return {
      kind: 'replaced',
      status: 410,
      title: 'A newer scan replaced this report',
      message: `This link is for the report of ${of.slice(0, 40)}; the latest is of ${whole.generated_at}, and no other is kept. The same link without of= answers the latest.`,
    };
  // A HEAD of a report served as text reads none of it (it answers the headers of the GET).
  if (!whole.url && input.method.toUpperCase() === 'HEAD') return { kind: 'whole', status: 200 };
  let found: string | null;
  try {
    // A HEAD is redirected to a URL signed for HEAD: `curl -I -L` follows it with HEAD.
    const head = input.method.toUpperCase() === 'HEAD';
    found = whole.url ? await whole.url(head ? 'HEAD' : 'GET') : ((await whole.text?.()) ?? null);
  } catch (error) {
    return failed(error);
  }
  if (found === null)
    return {
      kind: 'not_kept',
      status: 410,
      title: 'This report is no longer kept',
      message: `The report of ${whole.generated_at} this link is for is no longer kept. The same link without of= answers the latest report.`,
    };
  return whole.url ? { kind: 'whole', status: 303, url: found } : { kind: 'whole', status: 200, text: found };
}

/** The method, keys, signature and expiry of a read-only link; null when it passes, else the answer. */
async function checkViewLink(input: Omit<ViewInput, 'latestReport'>): Promise<ViewRefusal | null> {
  const method = input.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD')
    return {
      kind: 'method_not_allowed',
      status: 405,
      title: 'Not allowed',
      message: 'This link is read-only.',
    };
  let keys: readonly SigningKey[];
  try {
    keys = await input.signingKeys();
  } catch (error) {
    return keyReadRefusal(error, GENERIC_FAILURE);
  }
  const verdict = verifyLink({
    action: input.action,
    subject: ACCOUNT_SUBJECT,
    token: input.token,
    keys,
    now: input.now,
  });
  if (!verdict.ok && verdict.reason === 'expired')
    return {
      kind: 'link_expired',
      status: 410,
      title: 'This link has expired',
      message:
        input.action === 'calendar'
          ? 'This calendar link has expired. Subscribe again with the calendar link of the latest alert.'
          : 'Links in an alert are valid for a limited time. Use the link in the latest alert.',
    };
  if (!verdict.ok && verdict.reason === 'unknown_key')
    return {
      kind: 'unknown_key',
      status: 403,
      title: UNKNOWN_KEY_TITLE,
      message: unknownKeyMessage(verdict.kid, verdict.held),
    };
  if (!verdict.ok)
    return {
      kind: verdict.reason === 'malformed' ? 'malformed' : 'bad_signature',
      status: 403,
      title: 'This link is not valid',
      message: 'The link was changed, or is for something else. Use the link from the alert exactly as sent.',
    };
  return null;
}

function failed(error: unknown): ViewRefusal {
  return {
    kind: 'store_failed',
    status: 503,
    title: 'Unavailable',
    message: 'The report could not be read. Please try again in a few minutes.',
    detail: (error as Error).message,
  };
}

/**
 * The latest report is there but cannot be shown (it does not parse, or rendering it failed): a 503
 * that says so, with what failed for the log. Only the next scan mends it.
 */
export function unreadableReport(detail: string): ViewRefusal {
  return {
    kind: 'report_unreadable',
    status: 503,
    title: 'The latest report could not be read',
    message: 'The latest report could not be read; the next scan writes a new one.',
    detail,
  };
}
