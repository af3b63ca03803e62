import { normalizeDomainName } from '../base/text';
import { type DomainFinding, type Finding, isDomainFinding, summaryOf } from '../findings/classify';
import type { Problem } from '../reseller/paging';
import type { Domain } from '../reseller/schemas';
import type { Report } from '../scan/scan';
import { type FailedRenewal, missedRenewal, renewalStepOf } from './renewal-memory';
import {
  type DomainActions,
  type DomainMemory,
  sameWatched,
  WATCHED,
  WATCHED_NAMES,
  type WatchedFields,
  watchedFieldsOf,
} from './state';
import {
  boundField,
  domainKey,
  isHashedKey,
  MAX_FIELD_LENGTH,
  MAX_KEY_LENGTH,
  shownCut,
} from './state-bounds';

/** One domain as this scan read it (the first record of its key). */
export interface SeenDomain {
  /** The name as read. */
  readonly name: string;
  /** Its watched fields, bounded as the state keeps them (the remembered ones when they are equal). */
  watched: WatchedFields;
  readonly page: number;
  /** The policy it falls under (its name), when one does. */
  readonly group?: string;
}

/** A second record whose name is one already read once normalised: kept for the problem it becomes. */
interface SecondRecord extends SeenDomain {
  /** The name of the first record of that key, as read. */
  readonly first: string;
}

/**
 * What one scan read of the account's domains, beside the memory of the last scan: plain maps by
 * memory key (state-bounds.ts), `prior` as a store read it, `seen` as the account was read (the
 * first record of a key only). What the memory cannot keep as it is becomes a problem record, so
 * nothing from the reseller can wedge a store or be mistaken for another domain: a second record
 * whose normalised name is one already read (its finding left out and named in a problem,
 * critical when the finding was), a name longer than any domain name (kept under a hash of it),
 * and a watched field too long to keep (kept cut, with a hash, so a change is still seen).
 */
export class ScanMemory {
  /** Each domain's memory from the last scan, by key. */
  readonly prior = new Map<string, DomainMemory>();
  /** Each domain this scan read, by key. */
  readonly seen = new Map<string, SeenDomain>();
  /**
   * The keys of every re-check the registry check could not confirm this scan, as the check told
   * memory (registry-memory.ts): the report lists at most 100. Undefined until it has.
   */
  registryUnconfirmed: ReadonlySet<string> | undefined;
  /**
   * The keys the registry check was asked to re-check (registry-memory.ts): a registry finding
   * remembered of another key (saved by another scan meanwhile, read again after a conflict) was
   * not checked by this scan. Undefined until asked.
   */
  registryAsked: ReadonlySet<string> | undefined;
  /** The first records' problems (a name or a field too long to keep), in the order read. */
  private nameProblems: Problem[] = [];
  private seconds: SecondRecord[] = [];
  /** The stored memories that could not be read, as problem records (at most MAX_DAMAGE_SHOWN named). */
  private damage: Problem[] = [];
  private damageCount = 0;

  /** Adds a stored memory as the prior one of `key`; the first of a key wins (false for a second). */
  remember(key: string, memory: DomainMemory): boolean {
    if (this.prior.has(key)) return false;
    this.prior.set(key, memory);
    // A domain read as it was remembered shares the remembered fields: most of an account.
    const seen = this.seen.get(key);
    if (seen && sameWatched(seen.watched, memory.watched)) seen.watched = memory.watched;
    return true;
  }

  /**
   * A stored memory (`item`: a domain's key, a contact's, or a store's item of several) that could
   * not be read, and why: it becomes a problem record and what it remembered is compared as if seen
   * for the first time, so a damaged state stops no alert; the store writes the item again at the
   * next save.
   */
  damaged(item: string, reason: string): void {
    this.damageCount++;
    if (this.damage.length < MAX_DAMAGE_SHOWN)
      this.damage.push({
        resource: 'state',
        key: shownCut(item),
        page: 0,
        reason: `could not be read (${reason}): what it remembers was checked again and compared as if seen for the first time (a snooze or acknowledgement in it is lost); this scan's save writes it again`,
      });
  }

  /**
   * The state's account-wide part (`item`: the state file, or the table's `#meta`) could not be
   * read, and why: no memory was used, so every finding is announced as if seen for the first time,
   * and the scan writes nothing (it cannot check the state's account, generation or lease).
   */
  headDamaged(item: string, reason: string): void {
    this.damageCount++;
    this.damage.unshift({
      resource: 'state',
      key: shownCut(item),
      page: 0,
      reason: `could not be read (${reason}): no memory of earlier scans was used, so every finding is announced as if seen for the first time (snoozes and acknowledgements are not applied), and the state was not written; correct that value, or reset the state`,
    });
  }

  /** One domain as read, on `page`, under the policy named `group` (undefined: none). */
  observe(domain: Domain, page: number, group?: string): void {
    this.observeWatched(domain.domain_name, watchedFieldsOf(domain), page, group);
  }

  /** One domain read as `name`, with the watched fields `read`, on `page`, under the policy `group`. */
  observeWatched(name: string, read: WatchedFields, page: number, group?: string): void {
    const key = domainKey(name);
    const first = this.seen.get(key);
    if (first) {
      this.seconds.push({ name, first: first.name, page, watched: read });
      return;
    }
    const length = normalizeDomainName(name).length;
    if (length > MAX_KEY_LENGTH) this.nameProblems.push(longName(name, length, page));
    const watched = this.bounded(name, read, page);
    const before = this.prior.get(key)?.watched;
    this.seen.set(key, {
      name,
      watched: before && sameWatched(before, watched) ? before : watched,
      page,
      ...(group === undefined ? {} : { group }),
    });
  }

  /** Forgets the prior memories: the state moved on and is read again (what was read stays). */
  forgetPrior(): void {
    this.prior.clear();
    this.damage = [];
    this.damageCount = 0;
  }

  /** Forgets what was read so far: the read started over, only the last attempt's domains count. */
  restart(): void {
    this.seen.clear();
    this.nameProblems = [];
    this.seconds = [];
  }

  /** The remembered domains this read has not listed, by name (one kept under a hash of a long name left out). */
  unlisted(): string[] {
    const names: string[] = [];
    for (const key of this.prior.keys()) if (!this.seen.has(key) && !isHashedKey(key)) names.push(key);
    return names;
  }

  /** The prior memory of the domain a name stands for. */
  priorOf(name: string): DomainMemory | undefined {
    return this.prior.get(domainKey(name));
  }

  /** Every domain's snooze and acknowledgement, by key. */
  actions(): Map<string, DomainActions> {
    const out = new Map<string, DomainActions>();
    for (const [key, memory] of this.prior)
      if (memory.actions && (memory.actions.snooze || memory.actions.acknowledged))
        out.set(key, memory.actions);
    return out;
  }

  /**
   * The renewal memory's step (renewal-memory.ts) for every domain read: the watched fields each
   * keeps next where the watch kept is not the one read, and the renewals that failed while
   * watched, by name.
   */
  stepRenewals(now: number): { next: Map<string, WatchedFields>; failed: Map<string, FailedRenewal> } {
    const next = new Map<string, WatchedFields>();
    const failed = new Map<string, FailedRenewal>();
    for (const [key, seen] of this.seen) {
      const read = seen.watched.renewal;
      const remembered = this.prior.get(key)?.watched.renewal;
      if (read === undefined && remembered === undefined) continue;
      const step = renewalStepOf(read, remembered, now);
      if (step.failed && remembered?.due)
        failed.set(seen.name, { due: remembered.due, expiry: read?.expiry ?? '', watched: seen.watched });
      const keep = step.keep === 'before' ? remembered : step.keep === 'current' ? read : undefined;
      if (keep === read) continue;
      const { renewal: _read, ...rest } = seen.watched;
      next.set(key, keep ? { ...rest, renewal: keep } : rest);
    }
    for (const second of this.seconds) {
      const miss = missedRenewal(second.watched, this.priorOf(second.name), now);
      if (miss && !failed.has(second.name)) failed.set(second.name, miss);
    }
    return { next, failed };
  }

  /**
   * Puts every domain finding under its memory key and turns what cannot be remembered into
   * problems (see the class comment): a finding of a key that already has one, or of a name other
   * than the first one read of its key, is left out and named.
   */
  keyFindings(report: Report): { report: Report; findingByKey: Map<string, DomainFinding> } {
    const extra: Problem[] = [...this.nameProblems, ...this.damage];
    if (this.damageCount > this.damage.length)
      extra.push({
        resource: 'state',
        key: null,
        page: 0,
        reason: `and ${this.damageCount - this.damage.length} more stored memories could not be read; what they remembered was compared as if seen for the first time`,
      });
    const secondPages = new Map(this.seconds.map((s) => [s.name, s.page]));
    const pageOf = (name: string) => {
      const page = secondPages.get(name);
      if (page !== undefined) return page;
      const seen = this.seen.get(domainKey(name));
      return seen?.name === name ? seen.page : 0;
    };
    const second = (name: string, first: string, critical: boolean) =>
      extra.push(secondRecord(name, first, pageOf(name), critical));
    const findings: Finding[] = [];
    const findingByKey = new Map<string, DomainFinding>();
    const named = new Set<string>();
    for (const f of report.findings) {
      if (!isDomainFinding(f)) {
        findings.push(f);
        continue;
      }
      const key = domainKey(f.domain_name);
      const owner = findingByKey.get(key)?.domain_name ?? this.seen.get(key)?.name;
      if (findingByKey.has(key) || (owner !== undefined && owner !== f.domain_name)) {
        second(f.domain_name, owner ?? f.domain_name, f.severity === 'critical');
        named.add(f.domain_name);
        continue;
      }
      const length = normalizeDomainName(f.domain_name).length;
      if (!this.seen.has(key) && length > MAX_KEY_LENGTH)
        extra.push(longName(f.domain_name, length, pageOf(f.domain_name)));
      findingByKey.set(key, f);
      findings.push(f);
    }
    for (const s of this.seconds) if (!named.has(s.name)) second(s.name, s.first, false);
    if (extra.length === 0) return { report, findingByKey };
    return {
      report: { ...report, findings, summary: summaryOf(findings), problems: [...report.problems, ...extra] },
      findingByKey,
    };
  }

  /** The watched fields as the state keeps them: text past its bound cut (each a problem record). */
  private bounded(name: string, watched: WatchedFields, page: number): WatchedFields {
    let kept = watched;
    for (const field of WATCHED_NAMES) {
      const value = watched[field];
      if (!(WATCHED[field] as { bounded?: true }).bounded || typeof value !== 'string') continue;
      const bounded = boundField(value);
      if (bounded === value) continue;
      kept = { ...kept, [field]: bounded };
      this.nameProblems.push(
        problemOf(
          name,
          page,
          `its ${field} is ${value.length} characters, more than the ${MAX_FIELD_LENGTH} the state keeps: remembered cut, with a hash that still shows a change; the domain itself was checked`,
        ),
      );
    }
    return kept;
  }
}

/** How many damaged memories are named one by one; the rest are counted on one more record. */
const MAX_DAMAGE_SHOWN = 100;

const problemOf = (name: string, page: number, reason: string, critical = false): Problem => ({
  resource: 'domain',
  key: shownCut(name),
  page,
  reason,
  ...(critical ? { severity: 'critical' as const } : {}),
});

const longName = (name: string, length: number, page: number) =>
  problemOf(
    name,
    page,
    `the name is ${length} characters, longer than any domain name (${MAX_KEY_LENGTH}): remembered under a hash of it; the domain itself was checked`,
  );

const secondRecord = (name: string, first: string, page: number, critical: boolean) =>
  problemOf(
    name,
    page,
    name === first
      ? `a second domain record named ${JSON.stringify(shownCut(name))}; only the first is remembered and alerted on`
      : `a second domain record whose name is the same as ${JSON.stringify(shownCut(first))} once normalised; only the first is remembered and alerted on`,
    critical,
  );
