import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { AuditEntry, AuditTrail } from '../core/audit';
import { CALENDAR_CONTENT_TYPE, renderCalendar } from '../core/calendar';
import type { ReadOnlyAction } from '../core/links';
import { REPORT_PAGE_HEADERS, renderReportPage } from '../core/report-page';
import type { ReportStore } from '../core/report-store';
import { renderMessagePage, SECURITY_HEADERS } from '../core/restore-page';
import type { SecretSource } from '../core/secrets';
import { decideView } from '../core/view-decision';
import type { ProxyHandler } from './local-server';

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
  calendar: '/calendar.ics',
} as const;

/** The report page and the calendar feed. */
export function createViewHandler(deps: ViewDeps) {
  const clock = deps.clock ?? Date.now;
  return async (action: ReadOnlyAction, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const method = event.httpMethod.toUpperCase();
    const token = event.queryStringParameters ?? {};
    const outcome = await decideView({
      action,
      method,
      token,
      now: clock(),
      signingKeys: () => deps.secrets.signingKeys(),
      latestReport: async () => (await deps.reports())?.latest() ?? null,
    });
    deps.log({
      action,
      method: method.slice(0, 16),
      outcome: outcome.kind,
      status: outcome.status,
      sourceIp: event.requestContext?.identity?.sourceIp,
      ...('detail' in outcome && outcome.detail ? { detail: outcome.detail } : {}),
    });
    if (outcome.kind !== 'show') {
      const headers: Record<string, string> = {
        ...SECURITY_HEADERS,
        'Content-Type': 'text/html; charset=utf-8',
      };
      if (outcome.status === 405) headers.Allow = 'GET, HEAD';
      const body =
        method === 'HEAD'
          ? ''
          : renderMessagePage({ title: outcome.title, message: outcome.message, ok: outcome.status < 300 });
      return { statusCode: outcome.status, headers, body };
    }
    const label = deps.accountLabel?.();
    if (action === 'calendar') {
      return {
        statusCode: 200,
        headers: {
          ...SECURITY_HEADERS,
          'Content-Type': CALENDAR_CONTENT_TYPE,
          'Content-Disposition': 'inline; filename="domain-sentinel.ics"',
        },
        body: renderCalendar(outcome.report, label ? { accountLabel: label } : {}),
      };
    }
    const query = (event.queryStringParameters ?? {}) as Record<string, string>;
    const audit = await auditFor(deps);
    return {
      statusCode: 200,
      headers: { ...REPORT_PAGE_HEADERS, 'Content-Type': 'text/html; charset=utf-8' },
      body: renderReportPage({
        report: outcome.report,
        token: query,
        ...(query.q !== undefined ? { query: query.q } : {}),
        ...(label ? { accountLabel: label } : {}),
        ...(audit !== undefined ? { audit } : {}),
      }),
    };
  };
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

/** Routes an event to the handler of its resource; anything else is 404 with the same security headers. */
export function createWebHandler(parts: {
  readonly restore: ProxyHandler;
  readonly action: ActionHandler;
  readonly view: ReturnType<typeof createViewHandler>;
}): ProxyHandler {
  return async (event) => {
    switch (event.resource) {
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
        return {
          statusCode: 404,
          headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/html; charset=utf-8' },
          body: renderMessagePage({
            title: 'Not found',
            message: 'There is nothing here. Use the link from the alert.',
            ok: false,
          }),
        };
    }
  };
}
