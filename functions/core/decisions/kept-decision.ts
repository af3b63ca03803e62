import { normalizeDomainName } from '../base/text';
import { daysLeft } from '../findings/classify';
import { snoozeLapse } from '../memory/actions';
import { keptFindingOf } from '../memory/kept-quarantine';
import type { DomainMemory } from '../memory/state';
import { CLOCK_TOLERANCE_MS } from '../memory/state-time';
import { believableRestoreBy } from '../memory/unjudged-memory';
import type { Problem } from '../reseller/client';
import type { Domain } from '../reseller/schemas';
import { undocumentedStatusProblem } from '../scan/scan-problems';

/**
 * What the snooze, acknowledge and finding pages say of a domain whose record reads as nothing to
 * report under a status the API does not document while the scans' memory keeps it in quarantine
 * (memory/kept-quarantine.ts), and how they find it: from the record and memory, or from the
 * report's problem record. Pure.
 */

/**
 * A domain whose record reads as nothing to report, with a status the API does not document, while
 * the scans' memory keeps it in quarantine (kept-quarantine.ts: the scan alerts it as a record that
 * says quarantine): its remembered restore-by, null when not known; and, while a snooze of it holds
 * (alerts then list it, not as critical), `snoozed_until`: when the snooze ends, null when not known.
 */
export interface KeptQuarantine {
  readonly keptQuarantine: { readonly restore_by: string | null; readonly snoozed_until?: string | null };
}

/**
 * The quarantine the scans' memory keeps of a domain whose record (`domain`) has a status the API
 * does not document, for when it gives no finding (its memory judged by the scan, unjudged-memory.ts
 * believableRestoreBy), or null; with its snooze while one holds, judged as the scan judges it
 * (actions.ts keptActions: made by now, not lapsed against the quarantine memory keeps). Pure.
 */
export function keptQuarantineOf(
  domain: Domain,
  memory: DomainMemory | undefined,
  nowMs: number,
): KeptQuarantine | null {
  if (memory?.finding?.kind !== 'quarantine' || undocumentedStatusProblem(domain, 1) === null) return null;
  const restore_by = believableRestoreBy(memory.finding.restore_by, nowMs);
  const snooze = memory.actions?.snooze;
  const holds =
    snooze !== undefined &&
    Date.parse(snooze.at) - nowMs <= CLOCK_TOLERANCE_MS &&
    snoozeLapse(snooze, keptFindingOf(domain.domain_name, memory.finding, nowMs), nowMs) === null;
  return { keptQuarantine: { restore_by, ...(holds ? { snoozed_until: snooze.until } : {}) } };
}

/**
 * The quarantine the scans' memory kept of `name` (normalised) in a report, for when its record gave
 * no finding: the problem record the scan published for it (`kept_quarantine`, as keptQuarantineOf
 * judges a record read now), its restore-by believed as there, snoozed (until when not known) when
 * the record is not critical (a snooze of it held: kept-quarantine.ts withKeptQuarantines); or null. Pure.
 */
export function keptQuarantineIn(
  problems: readonly Problem[],
  name: string,
  nowMs: number,
): KeptQuarantine | null {
  const p = problems.find(
    (q) => q.kept_quarantine === true && q.key !== null && normalizeDomainName(q.key) === name,
  );
  if (!p) return null;
  const restore_by = believableRestoreBy(p.restore_by ?? undefined, nowMs);
  return { keptQuarantine: { restore_by, ...(p.severity === 'critical' ? {} : { snoozed_until: null }) } };
}

/** An instant in words: "2026-11-25 06:00 UTC". */
export const utc = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;

/**
 * A domain memory keeps in quarantine while its record reads as nothing to report, in words: what
 * memory keeps, its restore-by (null: not known), the next step, and whether alerts say it (daily,
 * as a record that says quarantine) or a snooze of it holds (`snoozedUntil`: until then; null: until
 * when not known; undefined: none holds). What its links answer: snooze and acknowledge, and its
 * finding page.
 */
export function keptQuarantineWords(
  domain: string,
  restoreBy: string | null,
  nowMs: number,
  snoozedUntil?: string | null,
): { readonly title: string; readonly message: string } {
  const by = restoreBy === null ? null : Date.parse(restoreBy);
  const left = by === null ? null : daysLeft(by, nowMs);
  const deadline =
    by === null || left === null
      ? 'its restore deadline is not known'
      : left < 0
        ? `its restore-by ${utc(by)} has PASSED`
        : `restore by ${utc(by)} (${left === 0 ? 'the last day' : `${left} day${left === 1 ? '' : 's'} left`})`;
  const until = snoozedUntil ? Date.parse(snoozedUntil) : Number.NaN;
  const alerts =
    snoozedUntil === undefined
      ? 'Alerts say it until a record with a documented status shows it is out of quarantine.'
      : Number.isNaN(until)
        ? 'A snooze of it held at the latest scan: alerts listed it, but not as critical, nor in the SMS, nor repeated; they say it as critical again once the snooze ends or its last days to restore begin.'
        : `It is snoozed until ${utc(until)}: until then (or until its last days to restore begin) alerts list it, but not as critical, nor in the SMS, nor repeated; then they say it as critical again.`;
  return {
    title: `${domain} was last read in quarantine`,
    message: `${domain}'s record now reads as nothing to report, with a status the reseller’s API does not document, and it was last read in quarantine: ${deadline}. Check it in the reseller’s control panel and, if it is still in quarantine, restore it there by then. ${alerts}`,
  };
}
