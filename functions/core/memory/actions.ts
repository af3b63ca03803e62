import {
  asRemembered,
  type DomainFinding,
  type DomainFindingKind,
  isDomainFinding,
  type Severity,
  severityRank,
  summaryOf,
} from '../findings/classify';
import { LAST_DAYS } from '../findings/quarantine-periods';
import { MAX_INSTANT_MS } from '../reseller/schemas';
import type { Report } from '../scan/scan';
import type { Acknowledgement, DomainActions, DomainMemory, Snooze } from './state';
import { CLOCK_TOLERANCE_MS } from './state-time';

export type { Acknowledgement, DomainActions, Snooze };

/**
 * Snooze and acknowledge, pure: what each remembers, whether it still silences a finding, and the
 * report as alerts see it (silenced findings left out, the rest untouched). The store that keeps
 * them is a port ({@link ActionStore}); functions/use-cases/state-action-store.ts implements it over the state stores.
 */

/** Days a snooze link offers; the link's own default is the middle one. */
export const SNOOZE_CHOICES = [1, 7, 30] as const;
export const DEFAULT_SNOOZE_DAYS = 7;
/** The longest snooze the command line accepts. */
export const MAX_SNOOZE_DAYS = 365;

const DAY_MS = 86_400_000;

/** An action that no longer silences, and why; the scan leaves it out of the next state. */
export interface Lapse {
  readonly domain_name: string;
  readonly action: 'snooze' | 'acknowledge';
  /** `last_days`: a quarantine entered its last {@link LAST_DAYS} days to restore (or passed its restore-by date). */
  readonly reason: 'expired' | 'worse' | 'changed' | 'resolved' | 'last_days';
}

/**
 * Where the links and the command line put snoozes and acknowledgements: the state store
 * (DynamoDB, a JSON file), beside each domain's memory, where the next scan reads them. Keys are
 * normalised domain names.
 */
export interface ActionStore {
  /** For messages: the file path or `dynamodb:TABLE`. */
  readonly location: string;
  snooze(domain: string, snooze: Snooze): Promise<void>;
  acknowledge(domain: string, acknowledgement: Acknowledgement): Promise<void>;
  /**
   * What the scans remember of `domain` (a renewal that fell due while watched), so that a link
   * judges the domain's finding the way the alert did; absent in a store that keeps no memory.
   */
  memoryOf?(domain: string): Promise<DomainMemory | undefined>;
}

const KIND_RANK: Readonly<Record<DomainFindingKind, number>> = {
  auto_renew_off: 0,
  expiring: 1,
  registry_expiry_mismatch: 1,
  renewal_failed: 2,
  expired: 3,
  registry_hold: 3,
  quarantine: 4,
  registry_redemption: 4,
  registry_unknown: 5,
};

/** True when `finding` is worse than it was: a higher severity, or further down the road to loss. */
export function isWorse(
  finding: DomainFinding,
  was: { kind: DomainFindingKind; severity: Severity },
): boolean {
  return (
    severityRank(finding.severity) > severityRank(was.severity) ||
    KIND_RANK[finding.kind] > KIND_RANK[was.kind]
  );
}

/**
 * The finding whose last days to restore end a silence: a quarantine memory kept it as, when its
 * record now reads another kind (`remembered`, docs/memory.md), else the finding itself.
 */
export const restoring = (f: DomainFinding): DomainFinding =>
  f.kind !== 'quarantine' && f.remembered?.kind === 'quarantine' ? asRemembered(f) : f;

/**
 * When silence about a quarantine ends whatever was chosen: as its last {@link LAST_DAYS} days to
 * restore begin (days_to_restore, rounded down, reaches LAST_DAYS). Null for any other finding, or
 * a quarantine whose restore deadline is unknown.
 */
export function silenceEndsAt(found: DomainFinding): number | null {
  const finding = restoring(found);
  if (finding.kind !== 'quarantine' || !finding.restore_by) return null;
  const restoreBy = Date.parse(finding.restore_by);
  return Number.isNaN(restoreBy) ? null : restoreBy - (LAST_DAYS + 1) * DAY_MS;
}

/**
 * True when `finding` is a quarantine in its last days to restore, or past its restore-by date:
 * the daily LAST DAYS alert and the PASSED alert are what stands between the person and the loss
 * of the domain, so no snooze or acknowledgement keeps them out.
 */
export function cannotBeSilenced(found: DomainFinding): boolean {
  const finding = restoring(found);
  return (
    finding.kind === 'quarantine' &&
    typeof finding.days_to_restore === 'number' &&
    finding.days_to_restore <= LAST_DAYS
  );
}

/**
 * The snooze lengths offered for `finding`: {@link SNOOZE_CHOICES}, for a quarantine cut to the
 * whole days before its last days to restore begin (so never more than its days to restore), and
 * none once they have.
 */
export function snoozeChoicesFor(finding: DomainFinding): readonly number[] {
  if (cannotBeSilenced(finding)) return [];
  const quarantine = restoring(finding);
  const left = quarantine.kind === 'quarantine' ? quarantine.days_to_restore : null;
  if (typeof left !== 'number') return SNOOZE_CHOICES;
  const cap = left - LAST_DAYS;
  return [...new Set(SNOOZE_CHOICES.map((days) => Math.min(days, cap)))];
}

/**
 * A snooze of `finding` for `days` days from `now` (epoch ms); a quarantine's ends as its last days
 * begin. It remembers the finding as memory judges it ({@link restoring}): one shown as another kind
 * while memory keeps its quarantine snoozes that quarantine, so the quarantine kept is not "worse".
 */
export function snoozeOf(finding: DomainFinding, days: number, now: number): Snooze {
  const ends = silenceEndsAt(finding) ?? Number.POSITIVE_INFINITY;
  const judged = restoring(finding);
  return {
    // Never past the last instant a four-digit year holds: the state could not read it back.
    until: new Date(Math.min(now + days * DAY_MS, ends, MAX_INSTANT_MS)).toISOString(),
    at: new Date(now).toISOString(),
    kind: judged.kind,
    severity: judged.severity,
  };
}

/** An acknowledgement of `finding` as it is at `now`. */
export function acknowledgementOf(finding: DomainFinding, now: number): Acknowledgement {
  return {
    at: new Date(now).toISOString(),
    kind: finding.kind,
    severity: finding.severity,
    date_expiry: finding.date_expiry,
    auto_renew: finding.auto_renew,
  };
}

/** Why a snooze no longer silences `finding` at `now`, or null while it does. */
export function snoozeLapse(snooze: Snooze, finding: DomainFinding, now: number): Lapse['reason'] | null {
  // A date that does not parse (a hand-edited state) never silences: NaN would never expire.
  const until = Date.parse(snooze.until);
  const at = Date.parse(snooze.at);
  // Nor does a snooze longer than any the tool makes (366 days).
  if (Number.isNaN(until) || Number.isNaN(at) || until <= now || until - at > 366 * DAY_MS) return 'expired';
  if (isWorse(finding, snooze)) return 'worse';
  // A snooze made before the restore-by date was known, or by hand, never outlasts the last days.
  return cannotBeSilenced(finding) ? 'last_days' : null;
}

/**
 * Why an acknowledgement no longer silences `finding`, or null while it does. "We let this one go"
 * accepts the days running down (a warning turning critical as expiry nears: the very thing that was
 * decided), so only a change of expiry, kind (expired, quarantine) or auto-renew lifts it; and a
 * quarantine's last days to restore, after which the domain is gone for good, are always alerted.
 */
export function acknowledgementLapse(ack: Acknowledgement, finding: DomainFinding): Lapse['reason'] | null {
  const same =
    ack.kind === finding.kind &&
    Date.parse(ack.date_expiry) === Date.parse(finding.date_expiry) &&
    ack.auto_renew === finding.auto_renew;
  if (!same) return 'changed';
  return cannotBeSilenced(finding) ? 'last_days' : null;
}

export interface AppliedActions {
  /** Every finding kept; the silenced ones carry `snoozed_until` or `acknowledged`. */
  readonly report: Report;
  /** Names of the domains whose finding is silenced in alerts. */
  readonly silenced: ReadonlySet<string>;
  /**
   * Keys of the domains with no finding this scan whose finding memory keeps (`kept`: a record read
   * by its dates only) a snooze still holds for: a kept quarantine published silenced (kept-quarantine.ts).
   */
  readonly keptSilenced: ReadonlySet<string>;
  readonly lapsed: readonly Lapse[];
}

/**
 * Marks each domain finding its snooze or acknowledgement still holds for, and lists the actions
 * that lapsed: expired, the finding got worse or changed, or it is gone (resolved). A lapsed
 * action never silences, so a domain comes back in the very scan that sees it get worse. An action
 * is judged against the finding as read; and where memory judges it as another (`judged`: a
 * quarantine kept while its record reads expired), that one's last days end it too. A domain with
 * no finding whose finding memory keeps (`kept`, by name) is not resolved: see keptActions.
 */
export function applyActions(
  report: Report,
  actions: ReadonlyMap<string, DomainActions>,
  now: number,
  nameOf: (domainName: string) => string = (n) => n,
  judged: (f: DomainFinding) => DomainFinding = (f) => f,
  kept: (name: string) => DomainFinding | undefined = () => undefined,
): AppliedActions {
  const silenced = new Set<string>();
  const lapsed: Lapse[] = [];
  const seen = new Set<string>();
  const findings = report.findings.map((f) => {
    if (!isDomainFinding(f)) return f;
    const name = nameOf(f.domain_name);
    const own = actions.get(name);
    if (!own) return f;
    seen.add(name);
    let marked: DomainFinding = f;
    const j = judged(f);
    const lastDays = cannotBeSilenced(j) ? 'last_days' : null;
    // A snooze made after this scan's time (a replay of the past, or a clock that ran ahead when it
    // was made) cannot silence it: it could not have been made yet. It is kept for later scans.
    const notYet = own.snooze && Date.parse(own.snooze.at) - now > CLOCK_TOLERANCE_MS;
    if (own.snooze && !notYet) {
      // Turned expired since the snooze by the expiry memory keeps (judgedAs), though its record
      // reads another finding: worse, as a record read turning expired is. Only that: a snooze made
      // of the finding as read while memory kept it is judged against what it was made of.
      const expiredSince =
        j !== f &&
        j.kind === 'expired' &&
        own.snooze.kind !== 'expired' &&
        Date.parse(j.date_expiry) > Date.parse(own.snooze.at);
      const worse = expiredSince ? 'worse' : null;
      const reason = snoozeLapse(own.snooze, f, now) ?? worse ?? lastDays;
      if (reason) lapsed.push({ domain_name: name, action: 'snooze', reason });
      else marked = { ...marked, snoozed_until: own.snooze.until };
    }
    if (own.acknowledged) {
      const reason = acknowledgementLapse(own.acknowledged, f) ?? lastDays;
      if (reason) lapsed.push({ domain_name: name, action: 'acknowledge', reason });
      else marked = { ...marked, acknowledged: true, acknowledged_at: own.acknowledged.at };
    }
    if (marked !== f) silenced.add(f.domain_name);
    return marked;
  });
  const keptSilenced = new Set<string>();
  for (const [name, own] of actions) {
    if (seen.has(name)) continue;
    const remembered = kept(name);
    if (remembered) {
      if (keptActions(name, own, remembered, now, lapsed)) keptSilenced.add(name);
      continue;
    }
    if (own.snooze) lapsed.push({ domain_name: name, action: 'snooze', reason: 'resolved' });
    if (own.acknowledged) lapsed.push({ domain_name: name, action: 'acknowledge', reason: 'resolved' });
  }
  return { report: { ...report, findings }, silenced, keptSilenced, lapsed };
}

/**
 * The actions of a domain whose record gives no finding while memory keeps its finding
 * (`remembered`, a quarantine its record read by its dates only cannot judge): not resolved, so a
 * snooze is judged against the finding kept, as it would be against that finding read (it lapses
 * at its end, when worse, or as a quarantine's last days begin); an acknowledgement lapses
 * (`changed`): the record no longer reads what was acknowledged, its status one the API does not
 * document. Pushes what lapsed; true while the snooze silences it.
 */
function keptActions(
  name: string,
  own: DomainActions,
  remembered: DomainFinding,
  now: number,
  lapsed: Lapse[],
): boolean {
  if (own.acknowledged) lapsed.push({ domain_name: name, action: 'acknowledge', reason: 'changed' });
  // Made after this scan's time: kept for later scans, silencing nothing now (as in applyActions).
  if (!own.snooze || Date.parse(own.snooze.at) - now > CLOCK_TOLERANCE_MS) return false;
  const reason = snoozeLapse(own.snooze, remembered, now);
  if (reason) lapsed.push({ domain_name: name, action: 'snooze', reason });
  return reason === null;
}

/**
 * The report as alerts see it: silenced domain findings left out and the summary counted again,
 * with how many were left out, so the digest can say so (nothing disappears without a word).
 */
export function alertView<R extends Report>(
  report: R,
  silenced: ReadonlySet<string>,
): R & { silenced?: number } {
  if (silenced.size === 0) return report;
  const findings = report.findings.filter((f) => !(isDomainFinding(f) && silenced.has(f.domain_name)));
  const summary = summaryOf(findings);
  return { ...report, findings, summary, silenced: report.findings.length - findings.length };
}

/** A next memory with the domain's actions kept, less the ones that lapsed. */
export function withActions(
  next: DomainMemory,
  actions: DomainActions | undefined,
  key: string,
  lapsed: ReadonlySet<string>,
): DomainMemory {
  if (!actions) return next;
  const { snooze, acknowledged } = actions;
  const kept: DomainActions = {
    ...(snooze && !lapsed.has(`${key} snooze`) ? { snooze } : {}),
    ...(acknowledged && !lapsed.has(`${key} acknowledge`) ? { acknowledged } : {}),
  };
  return kept.snooze || kept.acknowledged ? { ...next, actions: kept } : next;
}
