import { describe, expect, it } from 'vitest';
import { filterPolicyOf, planAlerts, smsDisposition } from '../../functions/core/alerts/groups';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { loadStatePolicy } from '../../functions/core/memory/state-config';
import { DomainSchema } from '../../functions/core/reseller/schemas';
import { loadScanSettings } from '../../functions/core/scan/config';
import { parsePolicies, reportPolicies, resolvePolicies } from '../../functions/core/scan/policies';
import { hasUrgentDeadline, parseQuietHours, quietUntil } from '../../functions/core/scan/quiet-hours';
import type { Report } from '../../functions/core/scan/scan';

const defaults = { classify: { expiryDays: 30, criticalDays: 7 }, minSeverity: 'warning' as const };
const set = (policies: unknown[]) => resolvePolicies(parsePolicies({ policies }, 'p.json'), defaults);
const refusal = (value: unknown) => {
  try {
    parsePolicies(value, 'p.json');
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

describe('parsePolicies', () => {
  it('refuses every unknown key with the closest known one, at each level, naming the policy', () => {
    expect(
      refusal({
        policies: [{ name: 'vip', match: { tgs: ['vip'] }, criticalDay: 30, alertEmail: ['a@b.nl'] }],
      }),
    ).toBe(
      'p.json: policies[0] ("vip"): match: unknown key tgs; did you mean tags?; p.json: policies[0] ("vip"): unknown key criticalDay; did you mean criticalDays?; p.json: policies[0] ("vip"): unknown key alertEmail; did you mean alertEmails?',
    );
    expect(refusal({ polices: [] })).toBe(
      'p.json: policies is required: the list of policies, e.g. {"policies": [{"name": "vip", "match": {"tags": ["vip"]}}]}; p.json: unknown key polices; did you mean policies?',
    );
    // Escalation's and repeat's own keys, at the top and in a policy.
    expect(refusal({ policies: [], escalation: { afterHours: 24 } })).toBe(
      'p.json: escalation.withinDays must be a whole number from 1 to 3650',
    );
    expect(refusal({ policies: [], escalation: { afterHour: 24, withinDays: 7 } })).toContain(
      'p.json: escalation: unknown key afterHour; did you mean afterHours?',
    );
    expect(refusal({ policies: [], repeat: { critical: 24, warnings: 'weekly' } })).toBe(
      'p.json: repeat: unknown key warnings; did you mean warning?',
    );
    expect(refusal({ policies: [], repeats: { critical: 24 } })).toBe(
      'p.json: unknown key repeats; did you mean repeat?',
    );
    expect(
      refusal({ policies: [{ name: 'vip', match: { tags: ['vip'] }, repeat: { critcal: 12, cap: 2 } }] }),
    ).toBe('p.json: policies[0] ("vip"): repeat: unknown key critcal; did you mean critical?');
  });

  it('reads a repeat cadence in words or hours, with a cap, and names a bad one', () => {
    expect(
      parsePolicies({ policies: [], repeat: { critical: 'daily', warning: 'weekly', cap: 3 } }, 'p.json'),
    ).toEqual({ policies: [], repeat: { critical: 20, warning: 164, cap: 3 } });
    const vip = { name: 'vip', match: { tags: ['vip'] }, repeat: { critical: 12 } };
    expect(parsePolicies({ policies: [vip] }, 'p.json').policies[0]?.repeat).toEqual({ critical: 12 });
    const bad = '"daily", "weekly" or a whole number of hours from 1 to 8760';
    expect(refusal({ policies: [], repeat: { critical: 'hourly' } })).toBe(
      `p.json: repeat.critical must be ${bad}`,
    );
    // Words are the two named, never a name every object answers to.
    expect(refusal({ policies: [], repeat: { warning: 'toString' } })).toBe(
      `p.json: repeat.warning must be ${bad}`,
    );
    expect(refusal({ policies: [{ ...vip, repeat: { warning: 0 } }] })).toBe(
      `p.json: policies[0] ("vip"): repeat.warning must be ${bad}`,
    );
    expect(refusal({ policies: [], repeat: { cap: -1 } })).toBe(
      'p.json: repeat.cap must be a whole number from 0 to 1000',
    );
    expect(
      refusal({ policies: [{ name: 'gone', match: { tags: ['x'] }, letLapse: true, repeat: { cap: 1 } }] }),
    ).toMatch(/a letLapse policy sends no alerts, so it takes no .*repeat; remove them, or letLapse$/);
  });

  it('takes CRITICAL_REPEAT_HOURS as the deployment’s critical cadence, under a policies file’s own', () => {
    const env = { CRITICAL_REPEAT_HOURS: '168' };
    expect(loadStatePolicy(env, 'warning').repeat).toEqual({ critical: 168, warning: 164 });
    const vip = parsePolicies(
      { policies: [{ name: 'vip', match: { tags: ['vip'] }, repeat: { warning: 24 } }] },
      'p.json',
    );
    expect(loadStatePolicy(env, 'warning', vip).repeatByGroup?.get('vip')).toEqual({
      critical: 168,
      warning: 24,
    });
    const own = parsePolicies({ policies: [], repeat: { critical: 'daily' } }, 'p.json');
    expect(loadStatePolicy(env, 'warning', own).repeat.critical).toBe(20);
    expect(() => loadStatePolicy({ CRITICAL_REPEAT_HOURS: '0' }, 'warning')).toThrow(/CRITICAL_REPEAT_HOURS/);
    // The report says the same cadence the memory keeps.
    const capped = parsePolicies(
      { policies: [{ name: 'vip', match: { tags: ['vip'] }, repeat: { cap: 2 } }] },
      'p.json',
    );
    expect(
      reportPolicies(resolvePolicies(capped, { ...defaults, criticalRepeatHours: 12 })).map((p) => p.repeat),
    ).toEqual([{ critical: 12, warning: 164, cap: 2 }]);
    expect(
      loadStatePolicy({ CRITICAL_REPEAT_HOURS: '12' }, 'warning', capped).repeatByGroup?.get('vip'),
    ).toEqual({
      critical: 12,
      warning: 164,
      cap: 2,
    });
  });

  it('resolves the cadence: the defaults, the top-level repeat over them, each policy’s over that', () => {
    expect(loadStatePolicy({}, 'warning').repeat).toEqual({ critical: 20, warning: 164 });
    expect(loadStatePolicy({}, 'warning').repeatByGroup).toBeUndefined();
    const policies = parsePolicies(
      {
        policies: [
          { name: 'vip', match: { tags: ['vip'] }, repeat: { critical: 12, cap: 2 } },
          { name: 'constructor', match: { tags: ['c'] }, repeat: { warning: 'daily' } },
          { name: 'plain', match: { tags: ['p'] } },
        ],
        repeat: { warning: 48, cap: 5 },
      },
      'p.json',
    );
    const state = loadStatePolicy({}, 'warning', policies);
    expect(state.repeat).toEqual({ critical: 20, warning: 48, cap: 5 });
    expect(state.repeatByGroup?.get('vip')).toEqual({ critical: 12, warning: 48, cap: 2 });
    expect(state.repeatByGroup?.get('constructor')).toEqual({ critical: 20, warning: 20, cap: 5 });
    // A policy without a repeat of its own keeps the deployment's (by falling through to it).
    expect(state.repeatByGroup?.has('plain')).toBe(false);
    // The report says what each group's own cadence came to.
    expect(reportPolicies(resolvePolicies(policies, defaults)).map((p) => p.repeat)).toEqual([
      { critical: 12, warning: 48, cap: 2 },
      { critical: 20, warning: 20, cap: 5 },
      undefined,
    ]);
  });

  it('names a bad value with its place', () => {
    expect(refusal({ policies: [{ name: 'Bad Name', match: { tags: ['x'] } }] })).toMatch(
      /^p\.json: policies\[0\] \("Bad Name"\): name must be 1 to 32 of a-z/,
    );
    expect(refusal({ policies: [{ name: 'a', match: {} }] })).toBe(
      'p.json: policies[0] ("a"): match must name tags, tlds or names',
    );
    expect(refusal({ policies: [{ name: 'a', match: { tlds: ['n l'] } }] })).toMatch(
      /policies\[0\] \("a"\): match\.tlds\[0\] must be a TLD such as nl/,
    );
    expect(refusal({ policies: [{ name: 'a', match: { tags: ['x'] }, minSeverity: 'urgent' }] })).toBe(
      'p.json: policies[0] ("a"): minSeverity must be one of info, warning, critical',
    );
    expect(
      refusal({ policies: [{ name: 'a', match: { tags: ['x'] }, expiryDays: 10, criticalDays: 20 }] }),
    ).toBe('p.json: policies[0] ("a"): criticalDays (20) must not exceed its expiryDays (10)');
    expect(refusal([])).toMatch(/^p\.json must be a JSON object/);
  });

  // Found by a hostile review: the top level said zod's own words and its own path.
  it('names a bad escalation or repeat in the words and places of a policy', () => {
    expect(
      refusal({ policies: [], escalation: { afterHours: 1, withinDays: 1, alertEmails: ['a@b.nl', 'x'] } }),
    ).toBe('p.json: escalation.alertEmails[1] must be e-mail addresses');
    expect(refusal({ policies: [], escalation: 'yes' })).toBe(
      'p.json: escalation must be an object such as {"afterHours": 24, "withinDays": 7}',
    );
    expect(refusal({ policies: [], repeat: 'daily' })).toBe(
      'p.json: repeat must be an object such as {"critical": "daily", "warning": "weekly"}',
    );
  });

  // Found by a hostile review: a list over its limit said zod's own words (Too big: expected array
  // to have <=100 items), and a pattern too long was said to hold characters it does not.
  it('names a list over its limit and a pattern too long in the words of the file', () => {
    const many = (n: number, of: (i: number) => string) => Array.from({ length: n }, (_, i) => of(i));
    expect(refusal({ policies: [{ name: 'a', match: { tags: many(101, (i) => `t${i}`) } }] })).toBe(
      'p.json: policies[0] ("a"): match.tags must list at most 100 tags',
    );
    expect(
      refusal({ policies: [{ name: 'a', match: { tags: ['x'] }, webhooks: many(11, () => 'json:/a') }] }),
    ).toBe('p.json: policies[0] ("a"): webhooks must list at most 10 webhooks');
    expect(
      refusal({
        policies: [],
        escalation: { afterHours: 1, withinDays: 1, alertEmails: many(101, (i) => `a${i}@b.nl`) },
      }),
    ).toBe('p.json: escalation.alertEmails must list at most 100 e-mail addresses');
    expect(refusal({ policies: [{ name: 'a', match: { names: [`${'a'.repeat(251)}.nl`] } }] })).toBe(
      'p.json: policies[0] ("a"): match.names[0] must be at most 253 characters, as a domain name is',
    );
    expect(refusal({ policies: [{ name: 'a', match: { names: [' '] } }] })).toMatch(
      /match\.names\[0\] must be a domain name pattern such as/,
    );
  });

  it('refuses two policies of one name, and recipients on a policy that lets its domains lapse', () => {
    expect(
      refusal({
        policies: [
          { name: 'a', match: { tags: ['x'] } },
          { name: 'a', match: { tags: ['y'] } },
        ],
      }),
    ).toBe('p.json: policies[1] ("a"): two policies are named a; each name must be unique');
    expect(
      refusal({
        policies: [{ name: 'gone', match: { tags: ['x'] }, letLapse: true, alertEmails: ['a@b.nl'] }],
      }),
    ).toMatch(/a letLapse policy sends no alerts, so it takes no recipients/);
  });

  it('refuses a policy whose criticalDays passes the deployment’s expiry window it would apply within', () => {
    expect(() => set([{ name: 'a', match: { tags: ['x'] }, criticalDays: 40 }])).toThrow(
      'policies[0] ("a"): criticalDays (40) must not exceed the expiry window it applies within (30 days, the deployment’s)',
    );
    expect(() =>
      loadScanSettings({
        resellerBaseUrl: 'https://api.example',
        policies: JSON.stringify({ policies: [{ name: 'a', match: { tags: ['x'] }, criticalDays: 40 }] }),
      }),
    ).toThrow(/^POLICIES policies\[0\] \("a"\): criticalDays \(40\)/);
  });
});

describe('matching a domain to its policy', () => {
  const policies = set([
    { name: 'lapse', match: { tags: ['Let-Lapse'] }, letLapse: true },
    { name: 'vip', match: { tags: ['vip'] }, criticalDays: 30, expiryDays: 60 },
    {
      name: 'nl',
      match: { tlds: ['.NL'], names: ['*.shop.example', 'bücher-?.de'] },
      minSeverity: 'critical',
    },
  ]);
  const nameOf = (domain_name: string, tags?: string[]) =>
    policies.policyFor({ domain_name, ...(tags ? { tags } : {}) })?.policy.name;

  it('takes the first policy that fits, tags compared without regard to case', () => {
    expect(nameOf('a.nl', ['VIP', 'let-lapse'])).toBe('lapse');
    expect(nameOf('a.com', [' vip '.trim()])).toBe('vip');
    expect(nameOf('a.nl', ['vip'])).toBe('vip');
    expect(nameOf('a.com', ['other'])).toBeUndefined();
  });

  it('fits any of a match’s lists: a TLD, or a name pattern where * spans labels', () => {
    expect(nameOf('a.nl')).toBe('nl');
    expect(nameOf('x.y.shop.example')).toBe('nl');
    expect(nameOf('shop.example')).toBeUndefined();
    expect(nameOf('nl.com')).toBeUndefined();
    expect(nameOf('bücher-1.de')).toBe('nl');
    // The registry's form of the same name fits the Unicode pattern too.
    expect(nameOf('xn--bcher-1-n2a.de')).toBe('nl');
    expect(nameOf('bücher-12.de')).toBeUndefined();
  });

  it('widens the read window to the longest expiry window of any policy', () => {
    expect(policies.widestExpiryDays).toBe(60);
    expect(policies.byName('vip')?.classify).toEqual({ expiryDays: 60, criticalDays: 30 });
  });

  it('reads a record’s tags tolerantly: a lone string, odd values dropped, a huge tag ignored', () => {
    const parse = (tags: unknown) =>
      DomainSchema.parse({ domain_name: 'a.nl', date_expiry: '2027-01-01T00:00:00Z', tags }).tags;
    expect(parse(' vip ')).toEqual(['vip']);
    expect(parse(['vip', 7, null, '', 'x'.repeat(201)])).toEqual(['vip']);
    expect(parse({ vip: true })).toBeUndefined();
    expect(parse([])).toBeUndefined();
  });
});

const finding = (
  name: string,
  severity: DomainFinding['severity'],
  extra: Partial<DomainFinding> = {},
): DomainFinding => ({
  domain_name: name,
  kind: 'expiring',
  severity,
  date_expiry: '2026-12-10T00:00:00.000Z',
  days_left: 18,
  auto_renew: false,
  registrant: null,
  ...extra,
});

const report = (findings: DomainFinding[]): Report => ({
  generated_at: '2026-11-22T06:00:01Z',
  now: '2026-11-22T06:00:00Z',
  source: { base_url: 'https://api.example', mode: 'full', read: 'full' },
  policy: { expiry_days: 30, critical_days: 7 },
  stats: { domains_scanned: findings.length, contacts_scanned: 0, requests: 1, duration_ms: 1 },
  summary: {
    critical: findings.filter((f) => f.severity === 'critical').length,
    warning: findings.filter((f) => f.severity === 'warning').length,
    info: findings.filter((f) => f.severity === 'info').length,
  },
  findings,
  problems: [],
});

describe('planAlerts', () => {
  const policies = set([
    { name: 'lapse', match: { tags: ['let-lapse'] }, letLapse: true },
    { name: 'vip', match: { tags: ['vip'] }, alertEmails: ['vip@example.nl'] },
    { name: 'quiet', match: { tlds: ['nl'] }, minSeverity: 'critical', alertSmsNumbers: ['+31612345678'] },
  ]);

  it('sends nothing for a warning of a group whose level is critical, and nothing for a domain let lapse', () => {
    const plan = planAlerts(
      report([
        finding('a.nl', 'warning', { policy: 'quiet' }),
        finding('b.com', 'critical', { policy: 'lapse', let_lapse: true }),
      ]),
      { minSeverity: 'warning', policies },
    );
    expect(plan).toEqual([]);
  });

  it('sends the account its message without the lapsing domain, and each group reaching its level its own', () => {
    const plan = planAlerts(
      report([
        finding('a.nl', 'critical', { policy: 'quiet' }),
        finding('v.com', 'warning', { policy: 'vip' }),
        finding('b.com', 'critical', { policy: 'lapse', let_lapse: true }),
        finding('c.com', 'info'),
      ]),
      { minSeverity: 'warning', policies },
    );
    expect(
      plan.map((p) => [p.group, p.report.findings.map((f) => (f as DomainFinding).domain_name)]),
    ).toEqual([
      [undefined, ['a.nl', 'v.com', 'c.com']],
      ['vip', ['v.com']],
      ['quiet', ['a.nl']],
    ]);
    expect(plan[0]?.report.summary).toEqual({ critical: 1, warning: 1, info: 1 });
    expect(plan[0]?.report.letting_lapse).toBe(1);
    expect(plan[1]?.report.source.group).toBe('vip');
  });

  it('sends the account’s message when memory decided to, whatever the levels', () => {
    expect(planAlerts(report([]), { minSeverity: 'warning', decided: true })).toHaveLength(1);
  });
});

describe('filter policies of the alert topic’s subscriptions', () => {
  it('keeps the account’s recipients off groups’ messages, and phones off what quiet hours hold', () => {
    const both = { groups: true, quietHours: true };
    expect(filterPolicyOf({ sms: false }, { groups: false, quietHours: false })).toBeUndefined();
    expect(filterPolicyOf({ sms: true }, { groups: false, quietHours: false })).toEqual({
      severity: ['critical'],
    });
    expect(filterPolicyOf({ sms: false }, both)).toEqual({
      group: [{ exists: false }],
      sms: [{ 'anything-but': 'release' }],
    });
    expect(filterPolicyOf({ sms: true, groups: ['vip'], accounts: ['brand-a'] }, both)).toEqual({
      account: ['brand-a'],
      group: ['vip'],
      severity: ['critical'],
      sms: [{ 'anything-but': 'held' }],
    });
  });
});

describe('quiet hours', () => {
  const window = parseQuietHours('22:00-07:00');

  it('reads HH:MM-HH:MM and refuses what is not a window', () => {
    expect(window).toEqual({ start: 1320, end: 420, text: '22:00-07:00' });
    expect(parseQuietHours('07:00 - 22:30')).toEqual({ start: 420, end: 1350, text: '07:00-22:30' });
    for (const bad of ['22:00-22:00', '24:00-07:00', '22-07', '22:00', '10:60-11:00'])
      expect(parseQuietHours(bad)).toBeNull();
  });

  it('ends the window at its local time in the zone, across midnight and the clocks changing', () => {
    const zone = 'Europe/Amsterdam';
    if (!window) throw new Error('no window');
    // 23:30 local (CET, UTC+1): until tomorrow 07:00.
    expect(quietUntil(Date.parse('2026-11-22T22:30:00Z'), window, zone)).toBe('2026-11-23T07:00:00');
    // 03:00 local: until 07:00 the same day.
    expect(quietUntil(Date.parse('2026-11-23T02:00:00Z'), window, zone)).toBe('2026-11-23T07:00:00');
    expect(quietUntil(Date.parse('2026-11-23T06:00:00Z'), window, zone)).toBeNull();
    // The night the clocks go forward (29 March 2026, 02:00 → 03:00).
    expect(quietUntil(Date.parse('2026-03-28T22:30:00Z'), window, zone)).toBe('2026-03-29T07:00:00');
    expect(quietUntil(Date.parse('2026-03-29T05:30:00Z'), window, zone)).toBeNull(); // 07:30 CEST
    expect(quietUntil(Date.parse('2026-03-29T04:30:00Z'), window, zone)).toBe('2026-03-29T07:00:00'); // 06:30 CEST
  });

  it('calls a deadline urgent within 48 hours: an expiry ahead, a restore-by ahead or past or unknown', () => {
    const now = Date.parse('2026-11-22T06:00:00Z');
    const urgent = (f: DomainFinding) => hasUrgentDeadline({ findings: [f], problems: [] }, now);
    expect(urgent(finding('a.nl', 'critical', { date_expiry: '2026-11-24T05:00:00Z' }))).toBe(true);
    expect(urgent(finding('a.nl', 'critical', { date_expiry: '2026-11-24T07:00:00Z' }))).toBe(false);
    // Expired already: its next deadline is a restore-by, once in quarantine.
    expect(
      urgent(finding('a.nl', 'critical', { kind: 'expired', date_expiry: '2026-11-20T00:00:00Z' })),
    ).toBe(false);
    const quarantine = { kind: 'quarantine' as const, date_expiry: '2026-10-01T00:00:00Z' };
    expect(urgent(finding('q.nl', 'critical', { ...quarantine, restore_by: '2026-11-23T00:00:00Z' }))).toBe(
      true,
    );
    expect(urgent(finding('q.nl', 'critical', { ...quarantine, restore_by: '2026-11-20T00:00:00Z' }))).toBe(
      true,
    );
    expect(urgent(finding('q.nl', 'critical', { ...quarantine, restore_by: null }))).toBe(true);
    expect(urgent(finding('q.nl', 'critical', { ...quarantine, restore_by: '2026-12-01T00:00:00Z' }))).toBe(
      false,
    );
    // A warning never reaches a phone: it is not what makes an SMS urgent.
    expect(urgent(finding('w.nl', 'warning', { date_expiry: '2026-11-23T00:00:00Z' }))).toBe(false);
  });

  it('holds only a critical message, in the window, without an urgent deadline', () => {
    const now = Date.parse('2026-11-22T22:30:00Z');
    const quiet = { hours: window ?? undefined, timeZone: 'Europe/Amsterdam', now };
    const critical = report([finding('a.nl', 'critical', { date_expiry: '2026-11-27T00:00:00Z' })]);
    expect(smsDisposition(critical, quiet)).toEqual({ sms: 'held', until: '2026-11-23T07:00:00' });
    expect(smsDisposition(report([finding('a.nl', 'warning')]), quiet)).toEqual({ sms: 'send' });
    expect(smsDisposition(critical, { timeZone: 'UTC', now })).toBeUndefined();
  });
});
