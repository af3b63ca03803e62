import { describe, expect, it } from 'vitest';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { snoozeOf } from '../../functions/core/memory/actions';
import { MAX_DEPARTED, nextDeparted } from '../../functions/core/memory/departures';
import { readStateHead } from '../../functions/core/memory/state-header';
import { DAY, domain, scanWithState } from '../support/state-scan';
import { EMPTY_STATE } from '../support/whole-state';

/** Found by a second review of the departures the state keeps (departures.ts). */

const T0 = Date.parse('2026-11-22T06:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

const run = scanWithState;

describe('departures saved by a clock that ran ahead', () => {
  const ahead = T0 + 3650 * DAY;
  const future = Object.fromEntries(
    Array.from({ length: MAX_DEPARTED }, (_, i) => [`ahead-${i}.nl`, { at: iso(ahead) }]),
  );

  it('keep a domain that leaves now beside the newest of them', () => {
    const left = new Map([['now.nl', { at: iso(T0) }]]);
    const next = nextDeparted({ departed: future }, left, new Map(), T0);
    expect(next?.['now.nl']).toEqual({ at: iso(T0) });
    expect(Object.keys(next ?? {})).toHaveLength(MAX_DEPARTED);
  });

  it('are brought back to the scan time, so they are forgotten 90 days after it', () => {
    const next = nextDeparted({ departed: { 'ahead.nl': { at: iso(ahead) } } }, new Map(), new Map(), T0);
    expect(next?.['ahead.nl']?.at).toBe(iso(T0));
    expect(nextDeparted({ departed: next }, new Map(), new Map(), T0 + 91 * DAY)).toBeUndefined();
  });
});

describe('a departure that does not read back (a state edited by hand)', () => {
  const head = {
    version: 1,
    scope: 'http://reseller.test',
    account: null,
    started_at: iso(T0),
    last_scan_at: iso(T0),
    last_published_at: null,
    problem_keys: [],
  };

  it('is dropped, the others and the rest of the state read', () => {
    const departed = { 'bad.nl': { at: 'garbage' }, 'typo.nl': 5, 'good.nl': { at: iso(T0) } };
    const read = readStateHead({ ...head, departed }, {}, 'state.json');
    expect(read.departed).toEqual({ 'good.nl': { at: iso(T0) } });
    expect(read.last_scan_at).toBe(iso(T0));
  });

  it('of another type altogether is none', () => {
    for (const departed of ['x', 5, null, ['a.nl']]) {
      const read = readStateHead({ ...head, departed }, {}, 'state.json');
      expect(read.departed).toBeUndefined();
    }
  });

  it('named __proto__ sets no prototype beside one dropped', () => {
    const departed = JSON.parse(`{"__proto__": {"at": "${iso(T0)}"}, "bad.nl": {"at": 1}}`);
    const read = readStateHead({ ...head, departed }, {}, 'state.json');
    expect(Object.getPrototypeOf(read.departed)).toBe(Object.prototype);
    expect(Object.hasOwn(read.departed ?? {}, 'bad.nl')).toBe(false);
  });
});

describe('a domain listed again more than 90 days after it left, with no scan between', () => {
  it('is not said to be back, and its old snooze does not hold again', () => {
    const expiring = domain('back.nl', T0, { auto_renew: false, date_expiry: T0 + 300 * DAY });
    const other = domain('a.nl', T0);
    const first = run([expiring, other], T0, EMPTY_STATE);
    const f = first.report.findings.find((x) => 'domain_name' in x && x.domain_name === 'back.nl');
    const memory = first.next.domains['back.nl'];
    if (!memory || !f) throw new Error('no memory');
    const snooze = snoozeOf(f as DomainFinding, 365, T0 + 3_600_000);
    const state = {
      ...first.next,
      domains: { ...first.next.domains, 'back.nl': { ...memory, actions: { snooze } } },
    };
    const gone = run([other], T0 + DAY, state);
    expect(gone.next.departed?.['back.nl']).toBeDefined();
    const late = run([expiring, other], T0 + 120 * DAY, gone.next);
    expect(late.report.changes.map((c) => c.kind)).not.toContain('returned');
    expect(late.next.domains['back.nl']?.actions).toBeUndefined();
  });
});
