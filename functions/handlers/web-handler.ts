import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { errorLine } from '../core/base/errors';
import { normalizeDomainName, safeText } from '../core/base/text';
import { type KeptQuarantine, keptQuarantineIn } from '../core/decisions/action-decision';
import { decideFindingPage, type FindingPageOutcome } from '../core/decisions/finding-decision';
import {
  decideView,
  decideWholeReport,
  unreadableReport,
  type ViewOutcome,
} from '../core/decisions/view-decision';
import { type DomainFinding, isDomainFinding } from '../core/findings/classify';
import type { ReadOnlyAction } from '../core/links/links';
import type { SecretSource } from '../core/links/secrets';
import type { AuditEntry, AuditTrail } from '../core/memory/audit';
import type { ReportStore } from '../core/memory/report-store';
import { CALENDAR_CONTENT_TYPE, renderCalendar } from '../core/pages/calendar';
import { FINDING_PAGE_HEADERS, renderFindingPage } from '../core/pages/finding-page';
import { REPORT_PAGE_HEADERS, renderReportPage } from '../core/pages/report-page';
import { renderMessagePage, SECURITY_HEADERS } from '../core/pages/restore-page';
import type { Report } from '../core/scan/scan';
import { type ProxyHandler, refusalAnswer } from './http-answer';

/**
 * One API Gateway proxy handler for every link: restore, snooze, acknowledge, the report page and
 * the calendar feed, routed by the API's resource. The web Lambda and `sentinel serve` both run it.
 */

export type ActionHandler = (
  action: 'snooze' | 'acknowledge',
  event: APIGatewayProxyEvent,
) => Promise<APIGatewayProxyResult>;

export interface ViewLogEntry {
  readonly action: ReadOnlyAction;
  readonly method: string;
  readonly outcome: string;
  readonly status: number;
  readonly sourceIp: string | undefined;
  readonly detail?: string;
}

export interface ViewDeps {
  readonly secrets: SecretSource;
  /** Where the latest report is kept; absent, the read-only links answer that there is none. */
  readonly reports: () => ReportStore | null;
  readonly log: (entry: ViewLogEntry) => void;
  readonly accountLabel?: () => string | undefined;
  /** The alert's time zone (ALERT_TIME_ZONE): the calendar's days are its days. @default UTC */
  readonly timeZone?: () => string | undefined;
  /** @default Date.now */
  readonly clock?: () => number;
  /** The restore attempts the report page lists; absent, the page has no such section. */
  readonly audit?: () => AuditTrail | null | Promise<AuditTrail | null>;
}

/** Resources of the API, as API Gateway names them in `event.resource`. */
export const WEB_RESOURCES = {
  restore: '/restore/{domain}',
  snooze: '/snooze/{domain}',
  acknowledge: '/acknowledge/{domain}',
  report: '/report',
  reportJson: '/report.json',
  calendar: '/calendar.ics',
  finding: '/finding/{domain}',
} as const;

/** The report page and the calendar feed. */
export function createViewHandler(deps: ViewDeps) {
  const clock = deps.clock ?? Date.now;
  return async (action: ReadOnlyAction, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const method = event.httpMethod.toUpperCase();
    const token = event.queryStringParameters ?? {};
    const now = clock();
    const decided = await decideView({
      action,
      method,
      token,
      now,
      signingKeys: () => deps.secrets.signingKeys(),
      // Read one element at a time: the view the page or the feed shows, never the whole report.
      latestReport: async () =>
        (await deps.reports())?.view(
          action === 'calendar'
            ? { purpose: 'calendar' }
            : { purpose: 'page', ...(token.q !== undefined ? { query: token.q } : {}) },
        ) ?? null,
    });
    // Rendered before the log line, so the log says what was answered (a report that fails to
    // render is a 503, not the 200 it was decided as).
    const audit = decided.kind === 'show' && action === 'report' ? await auditFor(deps) : undefined;
    const { outcome, result } = render(action, method, decided, event, viewOptions(deps, now), audit);
    deps.log({
      action,
      method: method.slice(0, 16),
      outcome: outcome.kind,
      status: result.statusCode,
      sourceIp: event.requestContext?.identity?.sourceIp,
      ...('detail' in outcome && outcome.detail ? { detail: outcome.detail } : {}),
    });
    return result;
  };
}

/** A view outcome as HTTP; rendering a report that throws becomes the report_unreadable outcome. */
function render(
  action: ReadOnlyAction,
  method: string,
  outcome: ViewOutcome,
  event: APIGatewayProxyEvent,
  options: ViewOptions,
  audit: AuditEntry[] | null | undefined,
): { outcome: ViewOutcome; result: APIGatewayProxyResult } {
  if (outcome.kind === 'show') {
    try {
      const shown = showReport(action, outcome.report, event, options, audit);
      // HEAD answers what GET would (RFC 9110 9.3.2), a report it cannot render too: only the body goes.
      return { outcome, result: method === 'HEAD' ? { ...shown, body: '' } : shown };
    } catch (error) {
      const failed = unreadableReport(`rendering the report failed: ${errorLine(error)}`);
      return render(action, method, failed, event, options, audit);
    }
  }
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
  };
  if (outcome.status === 405) headers.Allow = 'GET, HEAD';
  const body =
    method === 'HEAD'
      ? ''
      : renderMessagePage({ title: outcome.title, message: outcome.message, ok: outcome.status < 300 });
  return { outcome, result: { statusCode: outcome.status, headers, body } };
}

function showReport(
  action: ReadOnlyAction,
  report: Report,
  event: APIGatewayProxyEvent,
  options: ViewOptions,
  audit: AuditEntry[] | null | undefined,
): APIGatewayProxyResult {
  const label = options.accountLabel;
  if (action === 'calendar')
    return { statusCode: 200, headers: answerHeaders(action), body: renderCalendar(report, options) };
  const query = (event.queryStringParameters ?? {}) as Record<string, string>;
  return {
    statusCode: 200,
    headers: answerHeaders(action),
    body: renderReportPage({
      report,
      token: query,
      ...(query.q !== undefined ? { query: query.q } : {}),
      ...(label ? { accountLabel: label } : {}),
      ...(audit !== undefined ? { audit } : {}),
    }),
  };
}

/** The headers of `action`'s answer, to GET and to HEAD alike. */
function answerHeaders(action: ReadOnlyAction): Record<string, string> {
  return action === 'calendar'
    ? {
        ...SECURITY_HEADERS,
        'Content-Type': CALENDAR_CONTENT_TYPE,
        'Content-Disposition': 'inline; filename="domain-sentinel.ics"',
      }
    : { ...REPORT_PAGE_HEADERS, 'Content-Type': 'text/html; charset=utf-8' };
}

interface ViewOptions {
  readonly accountLabel?: string;
  readonly timeZone?: string;
  /** When the answer is made (epoch ms): the feed's DTSTAMP (calendar.ts). */
  readonly servedAt?: number;
}

function viewOptions(deps: ViewDeps, servedAt: number): ViewOptions {
  const accountLabel = deps.accountLabel?.();
  const timeZone = deps.timeZone?.();
  return { ...(accountLabel ? { accountLabel } : {}), ...(timeZone ? { timeZone } : {}), servedAt };
}

/** The audit trail's entries for the report page: undefined without a trail, null when it cannot be read. */
async function auditFor(deps: ViewDeps): Promise<AuditEntry[] | null | undefined> {
  try {
    const trail = await deps.audit?.();
    return trail ? await trail.listAudit() : undefined;
  } catch {
    return null;
  }
}

const htmlHeaders = () => ({ ...SECURITY_HEADERS, 'Content-Type': 'text/html; charset=utf-8' });

/**
 * `report.json`: the whole latest report for a program (the claim check of an alert too small for
 * it), behind the report link's own signature: its stored text, or a redirect (303) to a URL that
 * serves it for a few minutes (S3: a Lambda answer holds at most 6 MB), of that report even when a
 * scan saves a newer one before the redirect is followed.
 */
export function createWholeReportHandler(
  deps: Pick<ViewDeps, 'secrets' | 'reports' | 'log' | 'clock'>,
): ProxyHandler {
  const clock = deps.clock ?? Date.now;
  return async (event) => {
    const method = event.httpMethod.toUpperCase();
    const decided = await decideWholeReport({
      method,
      token: event.queryStringParameters ?? {},
      now: clock(),
      signingKeys: () => deps.secrets.signingKeys(),
      whole: async (of) => (await deps.reports()?.whole(of)) ?? null,
    });
    let result: APIGatewayProxyResult;
    if (decided.kind === 'whole' && decided.url)
      result = { statusCode: 303, headers: { ...SECURITY_HEADERS, Location: decided.url }, body: '' };
    else if (decided.kind === 'whole')
      result = {
        statusCode: 200,
        headers: { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' },
        body: method === 'HEAD' ? '' : (decided.text ?? ''),
      };
    else {
      const headers: Record<string, string> = {
        ...SECURITY_HEADERS,
        'Content-Type': 'application/json; charset=utf-8',
      };
      if (decided.status === 405) headers.Allow = 'GET, HEAD';
      result = {
        statusCode: decided.status,
        headers,
        body: method === 'HEAD' ? '' : JSON.stringify({ outcome: decided.kind, message: decided.message }),
      };
    }
    deps.log({
      action: 'report',
      method: method.slice(0, 16),
      outcome: `json_${decided.kind}`,
      status: result.statusCode,
      sourceIp: event.requestContext?.identity?.sourceIp,
      ...('detail' in decided && decided.detail ? { detail: decided.detail } : {}),
    });
    return result;
  };
}

export interface FindingDeps extends Pick<ViewDeps, 'secrets' | 'reports' | 'clock' | 'timeZone'> {
  /** True when snooze and acknowledge can be kept (a state store is configured). */
  readonly silencing: () => Promise<boolean>;
  readonly log: (
    entry: Omit<ViewLogEntry, 'action'> & { readonly action: 'finding'; readonly domain: string },
  ) => void;
}

/** The finding page: the one link an alert gives a finding (functions/core/decisions/finding-decision.ts). */
export function createFindingHandler(deps: FindingDeps): ProxyHandler {
  const clock = deps.clock ?? Date.now;
  return async (event) => {
    const method = event.httpMethod.toUpperCase();
    const domain = event.pathParameters?.domain ?? '';
    let decided: FindingPageOutcome = await decideFindingPage({
      method,
      domain,
      token: event.queryStringParameters ?? {},
      now: clock(),
      signingKeys: () => deps.secrets.signingKeys(),
      silencing: await deps.silencing().catch(() => false),
      findFinding: (name) => findingInLatest(deps, name, clock()),
    });
    const pageHeaders = { ...FINDING_PAGE_HEADERS, 'Content-Type': 'text/html; charset=utf-8' };
    let page = '';
    if (decided.kind === 'show') {
      try {
        page = renderFindingPage(decided, deps.timeZone?.() ?? 'UTC');
      } catch (error) {
        // As the report page: a kept report that cannot be shown is its 503, never an escaped error.
        const failed = unreadableReport(`rendering the finding failed: ${errorLine(error)}`);
        decided = { ...failed, kind: 'report_unreadable' };
      }
    }
    let result: APIGatewayProxyResult;
    // HEAD answers what GET would (RFC 9110 9.3.2), the page rendered too: the page's own policy, its stylesheet allowed.
    if (decided.kind === 'show')
      result = { statusCode: 200, headers: pageHeaders, body: method === 'HEAD' ? '' : page };
    else {
      const headers: Record<string, string> = htmlHeaders();
      if (decided.status === 405) headers.Allow = 'GET, HEAD';
      result = {
        statusCode: decided.status,
        headers,
        body:
          method === 'HEAD'
            ? ''
            : renderMessagePage({ title: decided.title, message: decided.message, ok: decided.status < 300 }),
      };
    }
    deps.log({
      action: 'finding',
      // The path is the caller's text: cut and made safe, as every acting link logs it.
      domain: safeText(domain.slice(0, 260)),
      method: safeText(method.slice(0, 16)),
      outcome: decided.kind,
      status: result.statusCode,
      sourceIp: event.requestContext?.identity?.sourceIp,
      ...('detail' in decided && decided.detail ? { detail: decided.detail } : {}),
    });
    return result;
  };
}

/**
 * The domain's finding in the latest report: from the view the page reads (the critical and
 * warning findings a page can show), else through the filter, which reads the report one finding at a time.
 * Without one, the quarantine memory kept while its record gave no finding (a problem record marked
 * `kept_quarantine`; the filter carries the one it names).
 */
async function findingInLatest(
  deps: Pick<ViewDeps, 'reports'>,
  name: string,
  nowMs: number,
): Promise<{ finding: DomainFinding; reportNow: string } | (KeptQuarantine & { reportNow: string }) | null> {
  const store = deps.reports();
  if (!store) return null;
  const match = (findings: readonly unknown[]) =>
    (findings as DomainFinding[]).find(
      (f) => isDomainFinding(f) && normalizeDomainName(f.domain_name) === name,
    );
  const view = await store.view({ purpose: 'page' });
  if (!view) return null;
  // The filter reads the whole report (some 100 MB at a million domains): once, for both lookups.
  let filtered: ReturnType<typeof store.view> | undefined;
  const named = () => {
    filtered ??= store.view({ purpose: 'page', query: name });
    return filtered;
  };
  const found =
    match(view.findings) ??
    (view.view?.omittedTotal || view.view?.urgentLeft ? match((await named())?.findings ?? []) : undefined);
  if (found) return { finding: found, reportNow: view.now };
  // No finding: the quarantine memory kept while the record gave none, as its snooze link answers it.
  const notes = view.view;
  const kept =
    keptQuarantineIn(view.problems, name, nowMs) ??
    (notes && notes.problemsTotal > view.problems.length
      ? keptQuarantineIn((await named())?.problems ?? [], name, nowMs)
      : null);
  return kept ? { ...kept, reportNow: view.now } : null;
}

/** Routes an event to the handler of its resource; anything else is 404 with the same security headers. */
export function createWebHandler(parts: {
  readonly restore: ProxyHandler;
  readonly action: ActionHandler;
  readonly view: ReturnType<typeof createViewHandler>;
  readonly whole: ProxyHandler;
  readonly finding: ProxyHandler;
}): ProxyHandler {
  return async (event) => {
    switch (event.resource) {
      case WEB_RESOURCES.finding:
        return parts.finding(event);
      case WEB_RESOURCES.reportJson:
        return parts.whole(event);
      case WEB_RESOURCES.restore:
        return parts.restore(event);
      case WEB_RESOURCES.snooze:
        return parts.action('snooze', event);
      case WEB_RESOURCES.acknowledge:
        return parts.action('acknowledge', event);
      case WEB_RESOURCES.report:
        return parts.view('report', event);
      case WEB_RESOURCES.calendar:
        return parts.view('calendar', event);
      default:
        return refusalAnswer({
          method: event.httpMethod,
          headers: event.headers,
          status: 404,
          outcome: 'not_found',
          title: 'Not found',
          message: 'There is nothing here. Use the link from the alert.',
        });
    }
  };
}
