import {
  ConditionalCheckFailedException,
  ReplicatedWriteConflictException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { type ActionInput, decideAction } from '../../functions/core/decisions/action-decision';
import type { DomainFinding } from '../../functions/core/findings/classify';
import { type LinkFinding, parseSigningKeys, signLink, verifyLink } from '../../functions/core/links/links';
import {
  acknowledgementOf,
  alertView,
  applyActions,
  snoozeChoicesFor,
  snoozeLapse,
  snoozeOf,
} from '../../functions/core/memory/actions';
import { StateConflictError, StateRefusedError } from '../../functions/core/memory/state';
import { StateDamagedError } from '../../functions/core/memory/state-header';
import { renderActionConfirmPage } from '../../functions/core/pages/action-page';
import type { Report } from '../../functions/core/scan/scan';
import { MemoryActionStore } from '../support/memory-action-store';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const keys = parseSigningKeys('s'.repeat(40));

const finding = (over: Partial<DomainFinding> = {}): DomainFinding => ({
  domain_name: 'example.nl',
  kind: 'expiring',
  severity: 'warning',
  date_expiry: new Date(NOW + 20 * DAY).toISOString(),
  days_left: 20,
  auto_renew: false,
  registrant: null,
  ...over,
});

/** A quarantine with `left` whole days to restore (restore_by at noon, NOW is 06:00). */
const quarantine = (left: number): DomainFinding =>
  finding({
    kind: 'quarantine',
    severity: 'critical',
    days_left: -40,
    date_deleted: new Date(NOW - 10 * DAY).toISOString(),
    restore_by: new Date(NOW + left * DAY + 6 * 3_600_000).toISOString(),
    days_to_restore: left,
  });

function tokenFor(
  action: 'snooze' | 'acknowledge' | 'restore',
  domain = 'example.nl',
  now = NOW,
  sentFor: LinkFinding = { kind: 'expiring', severity: 'warning' },
) {
  return Object.fromEntries(
    new URL(
      signLink({
        baseUrl: 'https://x.example',
        action,
        subject: domain,
        ...(action === 'restore' ? {} : { finding: sentFor }),
        keys,
        now,
      }),
    ).searchParams,
  );
}

function input(
  over: Partial<ActionInput> & { store?: MemoryActionStore; current?: DomainFinding | null } = {},
) {
  const store = over.store ?? new MemoryActionStore();
  const current = over.current === undefined ? finding() : over.current;
  let portBuilt = 0;
  const value: ActionInput = {
    action: 'snooze',
    method: 'POST',
    domain: 'example.nl',
    token: tokenFor(over.action === 'acknowledge' ? 'acknowledge' : 'snooze'),
    form: {},
    now: NOW,
    signingKeys: async () => keys,
    port: async () => {
      portBuilt++;
      return { store, findFinding: async () => current };
    },
    ...over,
  };
  return { value, store, portBuilt: () => portBuilt };
}

describe('decideAction', () => {
  it('GET shows the snooze confirmation with 1, 7 and 30 days (7 chosen) and changes nothing', async () => {
    const { value, store } = input({ method: 'GET' });
    const outcome = await decideAction(value);
    expect(outcome).toMatchObject({ kind: 'confirm', status: 200 });
    expect(outcome.confirm?.days).toEqual({ choices: [1, 7, 30], chosen: 7 });
    expect(outcome.confirm?.formAction).toBe(
      `?${new URLSearchParams(value.token as Record<string, string>)}`,
    );
    expect(store.writes).toBe(0);
  });

  it('HEAD checks the link only: no lookup, no write', async () => {
    const { value, store, portBuilt } = input({ method: 'HEAD' });
    await expect(decideAction(value)).resolves.toMatchObject({ kind: 'head', status: 200 });
    expect([portBuilt(), store.writes]).toEqual([0, 0]);
  });

  it('POST snoozes for the chosen days and stores what the finding was', async () => {
    const { value, store } = input({ form: { days: '30' } });
    await expect(decideAction(value)).resolves.toMatchObject({ kind: 'snoozed', status: 200 });
    expect(store.actions.get('example.nl')).toEqual({
      snooze: {
        until: new Date(NOW + 30 * DAY).toISOString(),
        at: new Date(NOW).toISOString(),
        kind: 'expiring',
        severity: 'warning',
      },
    });
  });

  it('POST without a choice snoozes 7 days; a length not offered is refused with no change', async () => {
    const plain = input();
    await decideAction(plain.value);
    expect(plain.store.actions.get('example.nl')?.snooze?.until).toBe(new Date(NOW + 7 * DAY).toISOString());
    for (const days of ['8', '0', '7.0', '-1', 'seven', '']) {
      const bad = input({ form: { days } });
      await expect(decideAction(bad.value)).resolves.toMatchObject({ kind: 'bad_days', status: 400 });
      expect(bad.store.writes).toBe(0);
    }
  });

  it('POST acknowledges with the facts it is silent on: expiry date, status and auto-renew', async () => {
    const { value, store } = input({ action: 'acknowledge' });
    await expect(decideAction(value)).resolves.toMatchObject({ kind: 'acknowledged', status: 200 });
    expect(store.actions.get('example.nl')?.acknowledged).toEqual({
      at: new Date(NOW).toISOString(),
      kind: 'expiring',
      severity: 'warning',
      date_expiry: finding().date_expiry,
      auto_renew: false,
    });
  });

  it.each([
    [
      'a tampered signature',
      { token: { ...tokenFor('snooze'), sig: `${tokenFor('snooze').sig?.slice(0, -1)}A` } },
      403,
      'bad_signature',
    ],
    ['a restore link used to snooze', { token: tokenFor('restore') }, 403, 'bad_signature'],
    ['an acknowledge link used to snooze', { token: tokenFor('acknowledge') }, 403, 'bad_signature'],
    ['a link for another domain', { token: tokenFor('snooze', 'other.nl') }, 403, 'bad_signature'],
    ['an expired link', { token: tokenFor('snooze', 'example.nl', NOW - 8 * DAY) }, 410, 'link_expired'],
    ['a link without a token', { token: {} }, 403, 'malformed'],
    ['an invalid domain', { domain: '../etc/passwd' }, 400, 'invalid_domain'],
    ['a PUT', { method: 'PUT' }, 405, 'method_not_allowed'],
  ] as const)('refuses %s with no lookup and no change of state', async (_, over, status, kind) => {
    for (const method of ['GET', 'HEAD', 'POST']) {
      const { value, store, portBuilt } = input({ method, ...over } as Partial<ActionInput>);
      await expect(decideAction(value)).resolves.toMatchObject({ kind, status });
      expect([portBuilt(), store.writes]).toEqual([0, 0]);
    }
  });

  it('refuses a link sent for a lesser finding on POST (409, no change) and offers links for what it is now', async () => {
    const quarantine = finding({ kind: 'quarantine', severity: 'critical', days_left: -40 });
    for (const action of ['snooze', 'acknowledge'] as const) {
      const { value, store } = input({ action, token: tokenFor(action), current: quarantine });
      const outcome = await decideAction(value);
      expect(outcome).toMatchObject({
        kind: 'finding_changed',
        status: 409,
        title: 'example.nl is now in quarantine (critical)',
      });
      expect(outcome.message).toBe(
        `This link was sent when example.nl was expiring (warning); it is now in quarantine (critical), so the link does not ${action} it. Nothing was changed. To ${action} it as it is now, use a link below.`,
      );
      expect(store.writes).toBe(0);
      // The links offered are signed for the quarantine, siblings of this link's URL.
      for (const offered of ['snooze', 'acknowledge'] as const) {
        const link = new URL(
          outcome.changed?.links[offered] ?? '',
          'https://x.example/prod/snooze/example.nl',
        );
        expect(link.pathname).toBe(`/prod/${offered}/example.nl`);
        const verdict = verifyLink({
          action: offered,
          subject: 'example.nl',
          token: Object.fromEntries(link.searchParams),
          keys,
          now: NOW,
        });
        expect(verdict).toMatchObject({ ok: true, finding: { kind: 'quarantine', severity: 'critical' } });
      }
    }
  });

  it('says on GET, before the button, that the finding changed; the button acts on what it is now', async () => {
    const quarantine = finding({ kind: 'quarantine', severity: 'critical', days_left: -40 });
    const { value, store } = input({ method: 'GET', current: quarantine });
    const outcome = await decideAction(value);
    expect(outcome).toMatchObject({ kind: 'confirm', status: 200 });
    expect(outcome.confirm?.sentFor).toEqual({ kind: 'expiring', severity: 'warning' });
    const posted = Object.fromEntries(new URLSearchParams(outcome.confirm?.formAction.slice(1)));
    expect(posted).toMatchObject({ kind: 'quarantine', sev: 'critical' });
    const post = input({ token: posted, current: quarantine, store });
    await expect(decideAction(post.value)).resolves.toMatchObject({ kind: 'snoozed', status: 200 });
    expect(store.actions.get('example.nl')?.snooze).toMatchObject({
      kind: 'quarantine',
      severity: 'critical',
    });
  });

  it('acts on a finding of the same kind that became less severe, and on one of the same kind and severity', async () => {
    const sentFor = { kind: 'expiring', severity: 'critical' } as const;
    for (const current of [finding(), finding({ severity: 'critical', days_left: 3 })]) {
      const { value, store } = input({ token: tokenFor('snooze', 'example.nl', NOW, sentFor), current });
      await expect(decideAction(value)).resolves.toMatchObject({ kind: 'snoozed', status: 200 });
      expect(store.writes).toBe(1);
    }
    const worse = input({ current: finding({ severity: 'critical', days_left: 3 }) });
    await expect(decideAction(worse.value)).resolves.toMatchObject({ kind: 'finding_changed', status: 409 });
  });

  it('offers a quarantine snooze lengths only up to its last days to restore, and shows its restore-by date', async () => {
    // 20 days to restore: its last 7 days begin in 13 days (restore_by − 8 days, as days round down).
    const sentFor = { kind: 'quarantine', severity: 'critical' } as const;
    const token = tokenFor('snooze', 'example.nl', NOW, sentFor);
    const get = input({ method: 'GET', token, current: quarantine(20) });
    const outcome = await decideAction(get.value);
    expect(outcome.confirm?.days).toEqual({ choices: [1, 7, 13], chosen: 7 });
    const page = renderActionConfirmPage(
      'example.nl',
      outcome.confirm as NonNullable<typeof outcome.confirm>,
      NOW,
    );
    expect(page).toContain('<dt>Restore by</dt><dd>2026-12-12 12:00 UTC (20 days left)</dd>');
    // An IDN's page names it as its heading does, in the title too (the tab and history show it).
    const idn = renderActionConfirmPage(
      'xn--bcher-kva.nl',
      outcome.confirm as NonNullable<typeof outcome.confirm>,
      NOW,
    );
    expect(idn).toContain('<title>Snooze xn--bcher-kva.nl (bücher.nl)?</title>');
    const ack = {
      ...(outcome.confirm as NonNullable<typeof outcome.confirm>),
      action: 'acknowledge' as const,
    };
    expect(renderActionConfirmPage('xn--bcher-kva.nl', ack, NOW)).toContain(
      '<title>Acknowledge xn--bcher-kva.nl (bücher.nl)?</title>',
    );
    expect(page).toContain('Its last 7 days to restore begin 2026-12-04 12:00 UTC');
    // 30 is not offered for it; 13 is, and then the snooze ends as the last days begin.
    const thirty = input({ token, form: { days: '30' }, current: quarantine(20) });
    await expect(decideAction(thirty.value)).resolves.toMatchObject({ kind: 'bad_days', status: 400 });
    expect(thirty.store.writes).toBe(0);
    const thirteen = input({ token, form: { days: '13' }, current: quarantine(20) });
    await expect(decideAction(thirteen.value)).resolves.toMatchObject({
      kind: 'snoozed',
      message: expect.stringContaining('Its last days to restore begin 2026-12-04 12:00 UTC'),
    });
    expect(thirteen.store.actions.get('example.nl')?.snooze?.until).toBe('2026-12-04T12:00:00.000Z');
  });

  it.each([
    ['snooze', 7],
    ['acknowledge', 0],
    ['snooze', -2],
  ] as const)(
    'will not %s a quarantine with %i days to restore: 200 on GET, 409 on POST, no change',
    async (action, left) => {
      const token = tokenFor(action, 'example.nl', NOW, { kind: 'quarantine', severity: 'critical' });
      const get = input({ action, method: 'GET', token, current: quarantine(left) });
      await expect(decideAction(get.value)).resolves.toMatchObject({ kind: 'last_days', status: 200 });
      const post = input({ action, token, current: quarantine(left) });
      const outcome = await decideAction(post.value);
      expect(outcome).toMatchObject({ kind: 'last_days', status: 409 });
      expect(outcome.message).toMatch(left < 0 ? /past its restore-by date/ : /in its last days to restore/);
      expect(post.store.writes).toBe(0);
    },
  );

  it('has nothing to snooze for a domain without a finding: 200 on GET, 409 on POST, no change', async () => {
    const get = input({ method: 'GET', current: null });
    await expect(decideAction(get.value)).resolves.toMatchObject({ kind: 'no_finding', status: 200 });
    const post = input({ current: null });
    await expect(decideAction(post.value)).resolves.toMatchObject({ kind: 'no_finding', status: 409 });
    expect(post.store.writes).toBe(0);
  });

  it('says nothing was changed when the store cannot be written, and names the failure for the log', async () => {
    const store = new MemoryActionStore();
    store.failing = true;
    const outcome = await decideAction(input({ store }).value);
    expect(outcome).toMatchObject({ kind: 'store_failed', status: 503, detail: 'Error: store unavailable' });
    expect(outcome.message).toMatch(/Nothing was changed/);
  });

  it.each([
    ['damaged', () => new StateDamagedError('state damaged', { item: '#meta', damage: 'not JSON' })],
    ['bound to another API key', () => new StateRefusedError('bound to another API key; rebind')],
    [
      'refused by AWS (access denied) under a wrapper',
      () =>
        new Error('the snooze could not be kept', {
          cause: Object.assign(new Error('not authorized to perform dynamodb:UpdateItem'), {
            name: 'AccessDeniedException',
            $fault: 'client',
            $metadata: { httpStatusCode: 400 },
          }),
        }),
    ],
    [
      'refused by AWS (access denied), unwrapped',
      () =>
        Object.assign(new Error('not authorized to perform dynamodb:UpdateItem'), {
          name: 'AccessDeniedException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
        }),
    ],
  ] as const)(
    'does not tell the clicker to try again when the state is %s, which no retry mends',
    async (_n, error) => {
      const store = new MemoryActionStore();
      store.snooze = async () => Promise.reject(error());
      const outcome = await decideAction(input({ store }).value);
      expect(outcome).toMatchObject({ kind: 'store_failed', status: 503 });
      expect(outcome.message).toMatch(/Nothing was changed/);
      expect(outcome.message).not.toMatch(/try again/i);
      expect(outcome.message).toMatch(/operator/);
    },
  );

  it('tells the clicker to try again when a running scan holds the state', async () => {
    const store = new MemoryActionStore();
    store.snooze = async () => Promise.reject(new StateConflictError('a scan holds the lease'));
    const outcome = await decideAction(input({ store }).value);
    expect(outcome).toMatchObject({ kind: 'store_failed', status: 503 });
    expect(outcome.message).toMatch(/try again in a few minutes/);
  });

  // As DynamoDbStateStore.conditional throws it: the lease's condition failed, a client fault of the SDK.
  it.each([
    ['ConditionalCheckFailedException', () => conditionFailed()],
    [
      'TransactionConflictException',
      () => new TransactionConflictException({ message: 'conflict', $metadata: {} }),
    ],
    [
      'ReplicatedWriteConflictException',
      () => new ReplicatedWriteConflictException({ message: 'conflict', $metadata: {} }),
    ],
  ] as const)(
    'tells the clicker to try again when the lease conflict came from DynamoDB as a %s',
    async (_n, cause) => {
      const store = new MemoryActionStore();
      store.snooze = async () =>
        Promise.reject(new StateConflictError('a scan holds the lease', { cause: cause() }));
      const outcome = await decideAction(input({ store }).value);
      expect(outcome).toMatchObject({ kind: 'store_failed', status: 503 });
      expect(outcome.message).toMatch(/try again in a few minutes/);
      expect(outcome.message).not.toMatch(/will not help/);
    },
  );

  it('turns a signing key that cannot be read into a generic page, the reason for the log only', async () => {
    const { value } = input({
      signingKeys: async () => {
        throw new Error('boom');
      },
    });
    await expect(decideAction(value)).resolves.toMatchObject({
      kind: 'misconfigured',
      status: 500,
      detail: 'Error',
    });
  });
});

const report = (findings: DomainFinding[]): Report => ({
  generated_at: new Date(NOW).toISOString(),
  now: new Date(NOW).toISOString(),
  source: { base_url: 'https://api.example', mode: 'full', read: 'full' },
  policy: { expiry_days: 30, critical_days: 7 },
  stats: { domains_scanned: 10, contacts_scanned: 0, requests: 1, duration_ms: 1 },
  summary: {
    critical: findings.filter((f) => f.severity === 'critical').length,
    warning: findings.filter((f) => f.severity === 'warning').length,
    info: findings.filter((f) => f.severity === 'info').length,
  },
  findings,
  problems: [],
});

describe('applyActions', () => {
  const snooze = {
    until: new Date(NOW + 3 * DAY).toISOString(),
    at: new Date(NOW - 4 * DAY).toISOString(),
    kind: 'expiring' as const,
    severity: 'warning' as const,
  };
  const ack = {
    at: new Date(NOW - DAY).toISOString(),
    kind: 'expiring' as const,
    severity: 'warning' as const,
    date_expiry: finding().date_expiry,
    auto_renew: false,
  };

  it('keeps a snoozed domain in the report, marked, and leaves it out of the alert view', () => {
    const other = finding({ domain_name: 'other.nl', severity: 'critical', days_left: 2 });
    const applied = applyActions(report([other, finding()]), new Map([['example.nl', { snooze }]]), NOW);
    expect(applied.report.findings.map((f) => ('snoozed_until' in f ? f.snoozed_until : null))).toEqual([
      null,
      snooze.until,
    ]);
    expect(applied.lapsed).toEqual([]);
    const view = alertView(applied.report, applied.silenced);
    expect(view.findings.map((f) => ('domain_name' in f ? f.domain_name : ''))).toEqual(['other.nl']);
    expect(view.summary).toEqual({ critical: 1, warning: 0, info: 0 });
    expect(view.silenced).toBe(1);
  });

  it.each([
    ['enters quarantine', finding({ kind: 'quarantine', severity: 'critical' }), 'worse'],
    ['becomes critical', finding({ severity: 'critical', days_left: 5 }), 'worse'],
    ['expires', finding({ kind: 'expired', severity: 'critical' }), 'worse'],
  ] as const)('lifts a snooze at once when the domain %s', (_, now, reason) => {
    const applied = applyActions(report([now]), new Map([['example.nl', { snooze }]]), NOW);
    expect(applied.silenced.size).toBe(0);
    expect(applied.lapsed).toEqual([{ domain_name: 'example.nl', action: 'snooze', reason }]);
    expect(applied.report.findings[0]).not.toHaveProperty('snoozed_until');
  });

  it('lifts a snooze when it expires, and one whose domain has no finding any more', () => {
    const later = applyActions(report([finding()]), new Map([['example.nl', { snooze }]]), NOW + 3 * DAY);
    expect(later.lapsed).toEqual([{ domain_name: 'example.nl', action: 'snooze', reason: 'expired' }]);
    const gone = applyActions(report([]), new Map([['example.nl', { snooze, acknowledged: ack }]]), NOW);
    expect(gone.lapsed.map((l) => `${l.action} ${l.reason}`)).toEqual([
      'snooze resolved',
      'acknowledge resolved',
    ]);
  });

  it('keeps an acknowledgement while expiry, status and auto-renew stay; even as the days run down', () => {
    const nearer = finding({ severity: 'critical', days_left: 3 });
    const applied = applyActions(report([nearer]), new Map([['example.nl', { acknowledged: ack }]]), NOW);
    expect(applied.report.findings[0]).toMatchObject({ acknowledged: true, acknowledged_at: ack.at });
    expect([...applied.silenced]).toEqual(['example.nl']);
  });

  it.each([
    ['the expiry date', finding({ date_expiry: new Date(NOW + 40 * DAY).toISOString() })],
    ['the status', finding({ kind: 'quarantine', severity: 'critical' })],
    ['auto-renew', finding({ auto_renew: null })],
  ])('lets an acknowledged domain come back when %s changes', (_, now) => {
    const applied = applyActions(report([now]), new Map([['example.nl', { acknowledged: ack }]]), NOW);
    expect(applied.silenced.size).toBe(0);
    expect(applied.lapsed).toEqual([{ domain_name: 'example.nl', action: 'acknowledge', reason: 'changed' }]);
  });
});

describe('a silenced quarantine in its last days to restore', () => {
  const q = quarantine(20);
  // As a state written before snoozes of a quarantine ended with its last days would hold them.
  const snooze = {
    until: new Date(NOW + 30 * DAY).toISOString(),
    at: new Date(NOW).toISOString(),
    kind: 'quarantine' as const,
    severity: 'critical' as const,
  };
  const acknowledged = acknowledgementOf(q, NOW);

  it.each([8, 7, 0, -3])('with %i days to restore is silenced only before its last 7 days', (left) => {
    const applied = applyActions(
      report([quarantine(left)]),
      new Map([['example.nl', { snooze, acknowledged }]]),
      NOW,
    );
    if (left > 7) {
      expect([...applied.silenced]).toEqual(['example.nl']);
      expect(applied.lapsed).toEqual([]);
    } else {
      expect(applied.silenced.size).toBe(0);
      expect(applied.lapsed).toEqual([
        { domain_name: 'example.nl', action: 'snooze', reason: 'last_days' },
        { domain_name: 'example.nl', action: 'acknowledge', reason: 'last_days' },
      ]);
    }
  });

  it('keeps silencing a quarantine whose restore deadline is unknown (nothing to count down to)', () => {
    const unknown = finding({
      kind: 'quarantine',
      severity: 'critical',
      restore_by: null,
      days_to_restore: null,
    });
    expect(snoozeLapse(snooze, unknown, NOW)).toBeNull();
    expect(snoozeChoicesFor(unknown)).toEqual([1, 7, 30]);
  });

  it('snoozes a quarantine at most until its last days begin, and offers no snooze within them', () => {
    expect(snoozeOf(q, 30, NOW).until).toBe(
      new Date(Date.parse(q.restore_by as string) - 8 * DAY).toISOString(),
    );
    expect(snoozeChoicesFor(quarantine(40))).toEqual([1, 7, 30]);
    expect(snoozeChoicesFor(quarantine(9))).toEqual([1, 2]);
    expect(snoozeChoicesFor(quarantine(8))).toEqual([1]);
    expect(snoozeChoicesFor(quarantine(7))).toEqual([]);
  });
});

describe('a snooze from a hand-edited state', () => {
  it('never silences with an until that is not a date, or longer than any snooze the tool makes', () => {
    const base = { at: new Date(NOW).toISOString(), kind: 'expiring' as const, severity: 'warning' as const };
    const f = finding({});
    expect(snoozeLapse({ ...base, until: 'never' }, f, NOW)).toBe('expired');
    expect(snoozeLapse({ ...base, until: new Date(NOW + 400 * DAY).toISOString() }, f, NOW)).toBe('expired');
    expect(snoozeLapse({ ...base, until: new Date(NOW + 30 * DAY).toISOString() }, f, NOW)).toBeNull();
  });
});

const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
