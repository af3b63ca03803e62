import fc from 'fast-check';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { acknowledgementOf, snoozeChoicesFor, snoozeOf } from '../../functions/core/memory/actions';
import type { StatePolicy } from '../../functions/core/memory/state';
import type { Problem } from '../../functions/core/reseller/paging';
import type { Domain } from '../../functions/core/reseller/schemas';
import { undocumentedStatusProblem } from '../../functions/core/scan/scan-problems';
import { DAY, domain, scanOf } from './state-scan';
import { compareWithState, DEFAULT_STATE_POLICY, type ScanState } from './whole-state';

/**
 * The account the memory's property models run scans over (test/unit/memory-model.property.test.ts,
 * memory-groups.property.test.ts): a few domains, each a record that events change between scans,
 * and the steps of time between them.
 */

export const T0 = Date.parse('2026-11-22T06:00:00Z');
export const HOUR = 3_600_000;

/**
 * The limit of a model's property test: a thousand or more scan sequences take 12 to 28 s on two
 * cores shared with the rest of the suite, close to vitest's 30 s default. A limit, not a measure:
 * a run that hangs still fails.
 */
export const PROPERTY_TIMEOUT_MS = 120_000;
export const NAMES = ['a.nl', 'b.com', 'c.nl', 'd.eu', 'e.com'] as const;

/** Why a read cut short (`incomplete`) was cut, as the problem it leaves names it. */
export const CUT =
  'the domain list changed while it was read (page 2 held fewer records than page 1 promised)';

/** One domain of the model: its record as the reseller lists it, whether it is listed, whether it reads. */
export interface Modelled {
  record: Domain;
  present: boolean;
  unreadable: boolean;
}

/** The first `size` of NAMES, each listed, readable and healthy at T0 (`overrides`: what the i-th record says besides). */
export const modelOf = (size: number, overrides: (i: number) => Partial<Domain> = () => ({})): Modelled[] =>
  NAMES.slice(0, size).map((name, i) => ({
    record: domain(name, T0, overrides(i)),
    present: true,
    unreadable: false,
  }));

/** The time of the next scan `minutes` on: a clock that runs back runs back a little, at most 3 hours behind the latest scan. */
export const nextScanAt = (now: number, latest: number, minutes: number): number =>
  Math.max(now + minutes * 60_000, latest - 3 * HOUR);

/**
 * An event drawn between scans: none half the time, else one of `events` (in this order, so a seed
 * draws the same sequences).
 */
export const eventOf = <E extends string>(events: readonly E[]) =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constant<E | 'none'>('none') },
    { weight: 10, arbitrary: fc.constantFrom<E | 'none'>(...events) },
  );

/**
 * The time between two scans (minutes, now and then a little back, as --allow-clock-skew lets it),
 * up to three events on the domains (which domain, what, a number for the event's size), and
 * whether the read is cut short.
 */
export const stepOf = <E>(event: fc.Arbitrary<E>) =>
  fc.record({
    minutes: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 10, max: 48 * 60 }) },
      { weight: 2, arbitrary: fc.integer({ min: 48 * 60, max: 21 * 24 * 60 }) },
      { weight: 1, arbitrary: fc.integer({ min: -180, max: -1 }) },
    ),
    events: fc.array(fc.tuple(fc.nat(4), event, fc.integer({ min: 1, max: 30 })), { maxLength: 3 }),
    incomplete: fc.oneof(
      { weight: 6, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
  });

/** The events that change a domain's record (or whether it is listed or reads). */
export type DomainEvent =
  | 'renew'
  | 'expiring'
  | 'expire'
  | 'quarantine'
  | 'restore'
  | 'renewal_due'
  | 'leave'
  | 'return'
  | 'undocumented'
  | 'unreadable'
  | 'readable'
  | 'auto_renew'
  | 'lock'
  | 'late_quarantine'
  | 'odd'
  | 'judge'
  | 'moved'
  | 'odd_quarantine';

/** What happens to a domain's record at `now` (`n`: days, hours or the like); other events change nothing here. */
export function applyDomainEvent(m: Modelled, e: string, n: number, now: number): void {
  const r = m.record;
  switch (e) {
    case 'renew':
      m.record = {
        ...r,
        status: ['registered'],
        date_deleted: null,
        date_expiry: Math.max(r.date_expiry, now) + 365 * DAY,
      };
      break;
    case 'expiring':
      m.record = {
        ...r,
        status: ['registered'],
        date_deleted: null,
        auto_renew: false,
        date_expiry: now + n * DAY - HOUR,
      };
      break;
    case 'expire':
      m.record = {
        ...r,
        status: ['registered'],
        date_deleted: null,
        auto_renew: false,
        // Hours ago, more than the clock ever runs back: no scan sees it before its expiry.
        date_expiry: now - (n + 4) * HOUR,
      };
      break;
    case 'quarantine':
      if (!r.status.includes('quarantine'))
        m.record = {
          ...r,
          status: ['quarantine'],
          auto_renew: false,
          date_expiry: Math.min(r.date_expiry, now - DAY),
          date_deleted: now - n * HOUR,
        };
      break;
    case 'late_quarantine':
      // Deleted a month or more ago: its last days to restore (or past them) in a few scans.
      m.record = {
        ...r,
        status: ['quarantine'],
        auto_renew: false,
        date_expiry: Math.min(r.date_expiry, now - 31 * DAY),
        date_deleted: now - (28 + Math.floor(n / 3)) * DAY,
      };
      break;
    case 'odd':
      // A status the API does not document beside the same dates: the scan reads it by its dates only.
      m.record = { ...r, status: ['pendingDelete'] };
      break;
    case 'moved':
      // Restored and renewed, or on its way out, under a status the API does not document: no finding by its dates.
      m.record = {
        ...r,
        status: ['pendingTransfer'],
        auto_renew: true,
        date_deleted: null,
        date_expiry: Math.max(r.date_expiry, now) + 365 * DAY,
      };
      break;
    case 'odd_quarantine':
      // Quarantine beside a status the API does not document, its expiry a day ago (maybe later than it read).
      m.record = {
        ...r,
        status: ['quarantine', 'pendingDelete'],
        auto_renew: false,
        date_expiry: now - DAY,
        date_deleted: now - (30 + (n % 8)) * DAY,
      };
      break;
    case 'judge':
      // Documented again: in quarantine while it has a deletion date, else registered.
      m.record = { ...r, status: r.date_deleted === null ? ['registered'] : ['quarantine'] };
      break;
    case 'restore':
      if (r.status.includes('quarantine')) m.record = { ...r, status: ['registered'], date_deleted: null };
      break;
    case 'renewal_due':
      m.record = {
        ...r,
        status: ['registered'],
        date_deleted: null,
        auto_renew: true,
        date_expiry: now + 20 * DAY,
        date_renewal: now + n * HOUR,
      };
      break;
    case 'leave':
      m.present = false;
      break;
    case 'return':
      m.present = true;
      break;
    case 'undocumented':
      m.record = { ...r, status: ['pendingTransfer'] };
      break;
    case 'unreadable':
      m.unreadable = true;
      break;
    case 'readable':
      m.unreadable = false;
      break;
    case 'auto_renew':
      m.record = { ...r, auto_renew: !r.auto_renew };
      break;
    case 'lock':
      m.record = { ...r, transfer_lock: !r.transfer_lock, auth_code_present: r.transfer_lock === true };
      break;
    default:
      break;
  }
}

/**
 * What one scan reads of the modelled account: the records it can read, and the problems it
 * reports (an unreadable record, critical when it says quarantine; an undocumented status; a read
 * cut short, which misses the last domain listed).
 */
export function readModel(
  model: readonly Modelled[],
  incomplete: boolean,
): { read: Domain[]; problems: Problem[] } {
  const read: Domain[] = [];
  const problems: Problem[] = [];
  // A read cut short misses the last domain listed.
  const listed = model.filter((m) => m.present);
  const reached = incomplete ? listed.slice(0, -1) : listed;
  for (const m of reached) {
    if (m.unreadable) {
      // A record that says quarantine but cannot be read is as critical as a quarantine (scan-problems.ts).
      const critical = m.record.status.includes('quarantine') ? { severity: 'critical' as const } : {};
      problems.push({
        resource: 'domain',
        key: m.record.domain_name,
        page: 1,
        reason: 'date_expiry: Invalid input',
        ...critical,
      });
      continue;
    }
    read.push(m.record);
    const odd = undocumentedStatusProblem(m.record, 1);
    if (odd) problems.push(odd);
  }
  if (incomplete) problems.push({ resource: 'domain', key: null, page: 2, reason: CUT });
  return { read, problems };
}

/**
 * One scan of the modelled account at `now`, compared with `state` as the CLI compares it: the
 * result, and the names of the records read and of those judged (read with a documented status).
 */
export function scanModel(
  model: readonly Modelled[],
  now: number,
  state: ScanState,
  incomplete: boolean,
  policy: StatePolicy = DEFAULT_STATE_POLICY,
) {
  const { read, problems } = readModel(model, incomplete);
  const { report, observed } = scanOf(read, now, { problems });
  const source = incomplete ? { ...report.source, incomplete: CUT } : report.source;
  return {
    result: compareWithState({ report: { ...report, source }, observed, state, policy }),
    read: new Set(read.map((d) => d.domain_name)),
    judged: new Set(read.filter((d) => !undocumentedStatusProblem(d, 1)).map((d) => d.domain_name)),
  };
}

/**
 * `state` with a snooze of `n` days or an acknowledgement of `shown` (the finding the last alert
 * showed of `name`), made between the scans at `before` and `now` (after the first, no later than
 * the second), as a link or the command line makes it; undefined where none is offered: no memory
 * of the domain, or no snooze choice (a quarantine in its last days).
 */
export function withAction(
  state: ScanState,
  name: string,
  action: 'snooze' | 'ack',
  shown: DomainFinding | undefined,
  n: number,
  before: number,
  now: number,
): ScanState | undefined {
  const mem = state.domains[name];
  if (!shown || !mem || snoozeChoicesFor(shown).length === 0) return undefined;
  const at = Math.max(before, Math.min(now, before + 60_000));
  const actions =
    action === 'snooze'
      ? { ...mem.actions, snooze: snoozeOf(shown, n, at) }
      : { ...mem.actions, acknowledged: acknowledgementOf(shown, at) };
  return { ...state, domains: { ...state.domains, [name]: { ...mem, actions } } };
}
