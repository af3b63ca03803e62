import { normalizeDomainName } from '../base/text';
import { type DomainFinding, type FindingActions, isDomainFinding } from '../findings/classify';
import {
  domainNameProblem,
  type LinkAction,
  type LinkFinding,
  type SigningKey,
  signLink,
} from '../links/links';
import type { Report } from './scan';

/**
 * The signed links a report carries: per domain finding its `actions` (its page, restore where it
 * applies, snooze, acknowledge), and for the account the report page, the report as JSON (the
 * claim check of a message too small for it) and the calendar feed.
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

type Signer = (action: LinkAction, subject?: string, ttlDays?: number, finding?: LinkFinding) => string;

/**
 * A finding's links: restore as it was signed by the scan, snooze and acknowledge signed each time
 * they are read. Two signed URLs kept per finding cost some 1.5 KB with their strings, 200 MB for
 * the 145 000 findings of a million-domain account; this keeps the finding's name, kind and
 * severity. Signing time and keys are fixed, so a link read twice is the same link. The links are
 * own enumerable properties, in the order a plain object would have them: JSON, Object.keys and
 * equality see what they would see in `{ restore, snooze, acknowledge }`.
 */
export class SignedActions implements FindingActions {
  declare readonly restore?: string;
  declare readonly snooze?: string;
  declare readonly acknowledge?: string;
  declare readonly page: string;
  readonly #sign: Signer;
  readonly #name: string;
  readonly #kind: LinkFinding['kind'];
  readonly #severity: LinkFinding['severity'];

  /** One pair of getters for every instance (V8 keeps them in the shared shape, not per object). */
  static readonly #silencing: PropertyDescriptorMap = {
    // Each carries the finding it is sent for: it will not act on a worse one later.
    snooze: {
      enumerable: true,
      get(this: SignedActions) {
        return this.#link('snooze');
      },
    },
    acknowledge: {
      enumerable: true,
      get(this: SignedActions) {
        return this.#link('acknowledge');
      },
    },
  };

  /** The finding's page: the one link the digest and chat give it (it offers the others). */
  static readonly #page: PropertyDescriptorMap = {
    page: {
      enumerable: true,
      get(this: SignedActions) {
        return this.#sign('finding', this.#name);
      },
    },
  };

  /** @param silencing offer snooze and acknowledge (they need the state store) */
  constructor(
    sign: Signer,
    name: string,
    finding: LinkFinding,
    restore: string | undefined,
    silencing = true,
  ) {
    this.#sign = sign;
    this.#name = name;
    this.#kind = finding.kind;
    this.#severity = finding.severity;
    if (restore) Object.defineProperty(this, 'restore', { value: restore, enumerable: true });
    if (silencing) Object.defineProperties(this, SignedActions.#silencing);
    Object.defineProperties(this, SignedActions.#page);
  }

  #link(action: 'snooze' | 'acknowledge'): string {
    return this.#sign(action, this.#name, undefined, { kind: this.#kind, severity: this.#severity });
  }
}

/**
 * The report with every link it can carry; a name that cannot be signed gets no links (restore says
 * why). `owned`: the report's finding objects were made for it alone (compareMemory makes a fresh
 * one per finding), so their `actions` are set on them, not on copies: one object fewer per
 * finding, some 20 MB at a million domains.
 */
export function attachLinks<R extends Report>(report: R, signing: LinkSigning, owned = false): R {
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
    const actions: FindingActions = new SignedActions(
      sign,
      name,
      f,
      f.restore_url,
      signing.silencing !== false,
    );
    if (!owned) return { ...f, actions } satisfies DomainFinding;
    (f as { actions?: FindingActions }).actions = actions;
    return f;
  });
  const reportUrl = sign('report');
  return {
    ...report,
    findings,
    report_url: reportUrl,
    report_json_url: reportJsonUrl(reportUrl, report.generated_at),
    calendar_url: sign('calendar', undefined, CALENDAR_LINK_TTL_DAYS),
  };
}

/**
 * The report as JSON, from the report link: the same signature (whoever may read the page may read
 * its JSON) on the path `report.json`, with `of` naming the report, so a newer scan's report is
 * never taken for this one (this one is served from the reports kept, and 410 once they expired).
 * The claim check of a message too small for the whole report (alerts/alert.ts).
 */
export function reportJsonUrl(reportUrl: string, generatedAt: string): string {
  const url = new URL(reportUrl);
  url.pathname = url.pathname.replace(/report$/, 'report.json');
  const query = url.search.slice(1);
  url.search = `of=${encodeURIComponent(generatedAt)}&${query}`;
  return url.toString();
}

/**
 * The report page listing exactly what an alert left out: the critical findings after the first
 * `critical` it named and the warning findings after the first `warning` (`from=<c>.<w>`), of the
 * report `of` names; of a group's own message, counted among that group's findings (`group`).
 * Same signature as the report link: it shows part of the same page.
 */
export function leftOutUrl(
  reportUrl: string,
  generatedAt: string,
  named: { readonly critical: number; readonly warning: number },
  group?: string,
): string {
  const url = new URL(reportUrl);
  const ofGroup = group === undefined ? '' : `&group=${encodeURIComponent(group)}`;
  url.search = `of=${encodeURIComponent(generatedAt)}&from=${named.critical}.${named.warning}${ofGroup}&${url.search.slice(1)}`;
  return url.toString();
}
