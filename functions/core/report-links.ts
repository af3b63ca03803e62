import { type DomainFinding, type FindingActions, isDomainFinding } from './classify';
import { domainNameProblem, type LinkAction, type LinkFinding, type SigningKey, signLink } from './links';
import type { Report } from './scan';
import { normalizeDomainName } from './text';

/**
 * The signed links a report carries: per domain finding its `actions` (restore where it applies,
 * snooze, acknowledge), and for the account the report page and the calendar feed.
 */

/**
 * Days a calendar link stays valid. Calendar apps keep the subscription URL for good, so a link
 * that expired with the alert (7 days) would quietly stop updating; a new one comes with every
 * alert, and a rotated key still verifies the old ones while it stays in the key list.
 */
export const CALENDAR_LINK_TTL_DAYS = 365;

export interface LinkSigning {
  readonly baseUrl: string;
  readonly keys: readonly SigningKey[];
  readonly now: number;
  /** Days acting and report links stay valid. */
  readonly ttlDays: number;
  /**
   * Whether snooze and acknowledge links are offered: they are kept in the state store, so without
   * one a link would only lead to an error page. @default true
   */
  readonly silencing?: boolean;
}

/** The report with every link it can carry; a name that cannot be signed gets no links (restore says why). */
export function attachLinks<R extends Report>(report: R, signing: LinkSigning): R {
  const sign = (action: LinkAction, subject?: string, ttlDays = signing.ttlDays, finding?: LinkFinding) =>
    signLink({
      baseUrl: signing.baseUrl,
      action,
      ...(subject ? { subject } : {}),
      ...(finding ? { finding } : {}),
      keys: signing.keys,
      now: signing.now,
      ttlSeconds: ttlDays * 86_400,
    });
  const findings = report.findings.map((f) => {
    if (!isDomainFinding(f)) return f;
    const name = normalizeDomainName(f.domain_name);
    if (domainNameProblem(name)) return f;
    const actions: FindingActions = {
      ...(f.restore_url ? { restore: f.restore_url } : {}),
      ...(signing.silencing === false
        ? {}
        : {
            // Each carries the finding it is sent for: it will not act on a worse one later.
            snooze: sign('snooze', name, signing.ttlDays, f),
            acknowledge: sign('acknowledge', name, signing.ttlDays, f),
          }),
    };
    return { ...f, actions } satisfies DomainFinding;
  });
  return {
    ...report,
    findings,
    report_url: sign('report'),
    calendar_url: sign('calendar', undefined, CALENDAR_LINK_TTL_DAYS),
  };
}
