import { describe, expect, it } from 'vitest';
import { belongsTo, bindAccount } from '../../functions/core/memory/state-account';
import {
  boundField,
  domainKey,
  isHashedKey,
  MAX_PROBLEM_KEYS,
} from '../../functions/core/memory/state-bounds';
import { isDue, scanTimeProblem } from '../../functions/core/memory/state-time';
import { DAY, domain, scanWithState } from '../support/state-scan';
import { DEFAULT_STATE_POLICY, EMPTY_STATE, parseState, type ScanState } from '../support/whole-state';

const T0 = Date.parse('2026-11-22T06:00:00Z');
const HOUR = 3_600_000;
const _policy = DEFAULT_STATE_POLICY;

const run = scanWithState;
/** Through JSON and the schema, as a store gives it back. */
const stored = (state: ScanState) => parseState(JSON.parse(JSON.stringify(state)), 'test');
const quarantine = (name: string, now: number) =>
  domain(name, now, { status: ['quarantine'], date_expiry: now - 40 * DAY, date_deleted: now - 10 * DAY });

describe('memory keys', () => {
  it.each(['__proto__', 'constructor', 'tostring', 'hasownproperty', '#meta', '#sha256:00'])(
    'remembers a domain named %s like any other: announced once, and seen when it leaves',
    (name) => {
      const first = run([quarantine(name, T0), domain('a.nl', T0)], T0, EMPTY_STATE);
      expect(first.report.findings.map((f) => f.change)).toEqual(['new']);
      const again = run([quarantine(name, T0), domain('a.nl', T0)], T0 + HOUR, stored(first.next));
      expect(again.report.findings.map((f) => f.change)).toEqual(['ongoing']);
      expect(again.publish).toBe(false);
      const gone = run([domain('a.nl', T0)], T0 + 2 * HOUR, stored(again.next));
      expect(gone.report.changes).toEqual([
        expect.objectContaining({ domain_name: name, kind: 'left_account' }),
      ]);
      expect(Object.getPrototypeOf(first.next.domains)).toBe(Object.prototype);
    },
  );

  it('keys a domain by its normalised name, so a second record of it is a problem, not a second memory', () => {
    const first = run(
      [domain('example.nl', T0), quarantine('example.nl.', T0), domain(' EXAMPLE.nl', T0)],
      T0,
      EMPTY_STATE,
    );
    expect(Object.keys(first.next.domains)).toEqual(['example.nl']);
    expect(domainKey('XN--BCHER-KVA.DE.')).toBe('xn--bcher-kva.de');
    expect(first.report.findings).toEqual([]);
    expect(first.report.summary).toEqual({ critical: 0, warning: 0, info: 0 });
    expect(first.report.problems).toEqual([
      {
        resource: 'domain',
        key: 'example.nl.',
        page: 0,
        reason:
          'a second domain record whose name is the same as "example.nl" once normalised; only the first is remembered and alerted on',
        severity: 'critical',
      },
      expect.objectContaining({
        key: ' EXAMPLE.nl',
        reason: expect.stringMatching(/^a second domain record/),
      }),
    ]);
    expect(first.why).toEqual(['2 new unreadable records']);
  });

  it('keeps a name longer than any domain name under a hash of it, shown cut', () => {
    const long = `${'b'.repeat(300)}.nl`;
    const first = run([quarantine(long, T0)], T0, EMPTY_STATE);
    const [key] = Object.keys(first.next.domains);
    expect(isHashedKey(key ?? '')).toBe(true);
    expect(first.next.domains[key ?? '']?.name).toBe(`${'b'.repeat(79)}…`);
    expect(first.report.problems[0]?.reason).toMatch(
      /^the name is 303 characters, longer than any domain name/,
    );
    const again = run([quarantine(long, T0)], T0 + HOUR, stored(first.next));
    expect(again.report.findings.map((f) => f.change)).toEqual(['ongoing']);
    expect(again.why).toEqual(['nothing new, escalated, changed or resolved at warning or above']);
  });

  it('keeps a long watched field cut, with a hash that still tells a change', () => {
    expect(boundField('short')).toBe('short');
    expect(boundField('x'.repeat(300))).toMatch(/^x{79}… \(300 characters, sha256 [0-9a-f]{32}\)$/);
    expect(boundField('x'.repeat(300))).not.toBe(boundField(`${'x'.repeat(299)}y`));
    const first = run(
      [domain('a.nl', T0, { nsgroup: 'n'.repeat(1_000), dns_hosted: false })],
      T0,
      EMPTY_STATE,
    );
    expect(first.next.domains['a.nl']?.watched.nsgroup?.length).toBeLessThan(200);
    const same = run(
      [domain('a.nl', T0, { nsgroup: 'n'.repeat(1_000), dns_hosted: false })],
      T0 + HOUR,
      stored(first.next),
    );
    expect(same.report.changes).toEqual([]);
    const other = run(
      [domain('a.nl', T0, { nsgroup: 'm'.repeat(1_000), dns_hosted: false })],
      T0 + 2 * HOUR,
      stored(same.next),
    );
    expect(other.report.changes.map((c) => c.kind)).toEqual(['nameservers_changed']);
  });

  it(`keeps at most ${MAX_PROBLEM_KEYS} unreadable-record keys, each bounded`, () => {
    const problems = Array.from({ length: MAX_PROBLEM_KEYS + 50 }, (_, i) => ({
      resource: 'domain' as const,
      key: `${i}-${'z'.repeat(400)}.nl`,
      page: 1,
      reason: 'unreadable',
    }));
    const { next } = run([domain('a.nl', T0)], T0, EMPTY_STATE, { problems });
    expect(next.problem_keys).toHaveLength(MAX_PROBLEM_KEYS);
    expect(Math.max(...next.problem_keys.map((k) => k.length))).toBeLessThanOrEqual(150);
    expect(Buffer.byteLength(JSON.stringify(next.problem_keys))).toBeLessThan(160_000);
    const quoted = run([domain('a.nl', T0)], T0, EMPTY_STATE, {
      problems: [{ resource: 'domain', key: '"\\é', page: 1, reason: 'unreadable' }],
    });
    expect(quoted.next.problem_keys).toEqual([expect.stringMatching(/^domain:#sha256:[0-9a-f]{64}$/)]);
  });

  it(`says nothing new of the same unreadable records past ${MAX_PROBLEM_KEYS}, and something when one of them changes`, () => {
    const problemsOf = (n: number, odd?: number) =>
      Array.from({ length: n }, (_, i) => ({
        resource: 'domain' as const,
        key: `${i === odd ? 'other' : 'broken'}-${String(i).padStart(5, '0')}.nl`,
        page: 1,
        reason: 'unreadable',
      }));
    const many = MAX_PROBLEM_KEYS + 500;
    const first = run([domain('a.nl', T0)], T0, EMPTY_STATE, { problems: problemsOf(many) });
    expect(first.why).toEqual([`${many} new unreadable records`]);
    expect(first.next.problem_keys).toHaveLength(MAX_PROBLEM_KEYS);
    expect(first.next.problem_keys_digest).toMatch(/^[0-9a-f]{64}$/);
    // The same records, in another order, through a store: nothing new.
    const same = run([domain('a.nl', T0)], T0 + HOUR, stored(first.next), {
      problems: problemsOf(many).reverse(),
    });
    expect(same.why).not.toContainEqual(expect.stringMatching(/unreadable/));
    expect(same.publish).toBe(false);
    // One record among those past the kept ones is another: the set changed, and the alert says so.
    const changed = run([domain('a.nl', T0)], T0 + 2 * HOUR, stored(same.next), {
      problems: problemsOf(many, many - 1),
    });
    expect(changed.why).toContainEqual(expect.stringMatching(/^\d+ new unreadable records$/));
    expect(changed.publish).toBe(true);
    // Back under the cap: no digest is kept.
    const few = run([domain('a.nl', T0)], T0 + 3 * HOUR, stored(changed.next), { problems: problemsOf(3) });
    expect(few.next.problem_keys_digest).toBeUndefined();
    expect(() => parseState({ ...EMPTY_STATE, problem_keys_digest: 'nope' }, 'x.json')).toThrow(
      /problem_keys_digest: not a sha256 digest/,
    );
  });
});

describe('stored times', () => {
  it('refuses a date-time that does not parse, naming the field', () => {
    const bad = {
      ...EMPTY_STATE,
      domains: {
        'a.nl': {
          watched: {},
          finding: null,
          alerted: { kind: 'expired', severity: 'critical', stage: 0, at: 'garbage' },
        },
      },
    };
    expect(() => parseState(bad, 'x.json')).toThrow(
      'the state in x.json cannot be used (domains["a.nl"].alerted.at: not an RFC 3339 date-time: "garbage")',
    );
    expect(() => parseState({ ...EMPTY_STATE, last_scan_at: '2026-02-30T00:00:00Z' }, 'x.json')).toThrow(
      /last_scan_at: not an RFC 3339 date-time/,
    );
  });

  it('counts a stored time in the future, or one that does not parse, as due', () => {
    expect(isDue(new Date(T0 - 21 * HOUR).toISOString(), T0, 20 * HOUR)).toBe(true);
    expect(isDue(new Date(T0 - 19 * HOUR).toISOString(), T0, 20 * HOUR)).toBe(false);
    expect(isDue(new Date(T0 + 30 * DAY).toISOString(), T0, 20 * HOUR)).toBe(true);
    expect(isDue('garbage', T0, 20 * HOUR)).toBe(true);
  });

  it('refuses a scan more than 5 minutes ahead of the clock, or before the last scan', () => {
    expect(scanTimeProblem(T0 + 4 * 60_000, T0, null)).toBeNull();
    expect(scanTimeProblem(T0 + 6 * 60_000, T0, null)).toBe(
      "the scan's time 2026-11-22T06:06:00.000Z is 6 minutes ahead of this machine's clock (2026-11-22T06:00:00.000Z)",
    );
    expect(scanTimeProblem(T0 - DAY, T0, new Date(T0 - DAY).toISOString())).toBeNull();
    expect(scanTimeProblem(T0 - DAY, T0, new Date(T0 - HOUR).toISOString())).toBe(
      "the scan's time 2026-11-21T06:00:00.000Z is 23 hours before the state's last scan (2026-11-22T05:00:00.000Z)",
    );
  });

  it('repeats a quarantine whose last alert is stored in the future, and the summary whose last publish is', () => {
    const first = run([quarantine('q.nl', T0)], T0, EMPTY_STATE);
    const future = new Date(T0 + 30 * DAY).toISOString();
    const memory = first.next.domains['q.nl'];
    if (!memory) throw new Error('q.nl not remembered');
    const skewed: ScanState = {
      ...first.next,
      last_published_at: future,
      domains: {
        'q.nl': {
          ...memory,
          alerted: { kind: 'quarantine', severity: 'critical', stage: -1, at: future, first_at: future },
        },
      },
    };
    expect(run([quarantine('q.nl', T0)], T0 + HOUR, skewed).why).toEqual(['1 critical repeated after 20 h']);
    const quiet = run([domain('a.nl', T0)], T0, EMPTY_STATE);
    expect(run([domain('a.nl', T0)], T0 + HOUR, { ...quiet.next, last_published_at: future }).why).toEqual([
      'summary: nothing published for 7 days',
    ]);
  });
});

describe('account binding', () => {
  it('binds without the key, with a salt of its own, and tells the key from another', async () => {
    const one = await bindAccount('key-of-account-a');
    const two = await bindAccount('key-of-account-a');
    expect(JSON.stringify(one)).not.toContain('key-of-account-a');
    expect(one.salt).not.toBe(two.salt);
    expect(one.hash).not.toBe(two.hash);
    expect(await belongsTo(one, 'key-of-account-a')).toBe(true);
    expect(await belongsTo(one, 'key-of-account-b')).toBe(false);
    expect(parseState({ ...EMPTY_STATE, account: one }, 'x').account).toEqual(one);
    expect(() => parseState({ ...EMPTY_STATE, account: { salt: 'x', hash: 'y' } }, 'x')).toThrow(
      /account\.salt/,
    );
  });
});
