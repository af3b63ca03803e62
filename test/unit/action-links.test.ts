import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_SUBJECT,
  type LinkAction,
  type LinkFinding,
  parseLinkPath,
  parseSigningKeys,
  signLink,
  signRestoreLink,
  verifyLink,
} from '../../functions/core/links/links';

const NOW = Date.parse('2026-11-22T06:00:00Z');
const BASE = 'https://x.example/prod/';
const keys = parseSigningKeys('k'.repeat(40));
const rotated = parseSigningKeys(`${'n'.repeat(40)},${'k'.repeat(40)}`);
/** What a snooze or acknowledge link is sent for. */
const WARNING: LinkFinding = { kind: 'expiring', severity: 'warning' };
const forAction = (action: LinkAction) =>
  action === 'snooze' || action === 'acknowledge' ? { finding: WARNING } : {};

/** What the router does with a link: path relative to the base, then action, subject and token. */
function refusedOrVerdict(url: string, now = NOW) {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'unparseable';
  }
  const basePath = new URL(BASE).pathname.replace(/\/$/, '');
  if (parsed.origin !== new URL(BASE).origin || !parsed.pathname.startsWith(basePath)) return 'elsewhere';
  const route = parseLinkPath(parsed.pathname.slice(basePath.length));
  if (!route) return 'no route';
  const verdict = verifyLink({
    action: route.action,
    subject: route.subject,
    token: Object.fromEntries(parsed.searchParams),
    keys,
    now,
  });
  return verdict.ok ? { ok: true as const, ...route } : verdict.reason;
}

/** The parts of a link that the signature covers, as the router reads them. */
function signedPart(url: string): string | null {
  try {
    const u = new URL(url);
    return JSON.stringify([
      u.origin,
      u.pathname,
      ...['kind', 'sev', 'exp', 'kid', 'sig'].map((k) => u.searchParams.getAll(k)),
    ]);
  } catch {
    return null;
  }
}

describe('signLink / verifyLink', () => {
  it('signs restore links exactly as before, so links already in mailboxes keep working', () => {
    const old = signRestoreLink({ baseUrl: BASE, domain: 'example.nl', keys, now: NOW });
    const generic = signLink({ baseUrl: BASE, action: 'restore', subject: 'example.nl', keys, now: NOW });
    expect(generic).toBe(old);
    expect(old).toMatch(/^https:\/\/x\.example\/prod\/restore\/example\.nl\?exp=\d+&kid=[0-9a-f]{8}&sig=/);
  });

  it.each([
    ['snooze', 'snooze/example.nl'],
    ['acknowledge', 'acknowledge/example.nl'],
    ['report', 'report'],
    ['calendar', 'calendar.ics'],
  ] as const)('builds a %s link at /%s that verifies for that action only', (action, path) => {
    const subject = action === 'report' || action === 'calendar' ? undefined : 'example.nl';
    const link = signLink({
      baseUrl: BASE,
      action,
      ...(subject ? { subject } : {}),
      ...forAction(action),
      keys,
      now: NOW,
    });
    expect(link.startsWith(`${BASE}${path}?${subject ? 'kind=expiring&sev=warning&' : ''}exp=`)).toBe(true);
    expect(refusedOrVerdict(link)).toEqual({ ok: true, action, subject: subject ?? ACCOUNT_SUBJECT });
  });

  it('never lets a link act as another action: a snooze link cannot restore, and so on for every pair', () => {
    const actions: LinkAction[] = ['restore', 'snooze', 'acknowledge', 'report', 'calendar'];
    for (const signed of actions) {
      const subject = signed === 'report' || signed === 'calendar' ? ACCOUNT_SUBJECT : 'example.nl';
      const token = Object.fromEntries(
        new URL(signLink({ baseUrl: BASE, action: signed, subject, ...forAction(signed), keys, now: NOW }))
          .searchParams,
      );
      for (const used of actions) {
        const verdict = verifyLink({ action: used, subject, token, keys, now: NOW });
        expect([signed, used, verdict.ok]).toEqual([signed, used, signed === used]);
      }
    }
    const snooze = new URL(
      signLink({ baseUrl: BASE, action: 'snooze', subject: 'example.nl', finding: WARNING, keys, now: NOW }),
    );
    expect(
      verifyLink({
        action: 'restore',
        subject: 'example.nl',
        token: Object.fromEntries(snooze.searchParams),
        keys,
        now: NOW,
      }),
    ).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a link moved to another domain, an expired one, and keeps verifying across a key rotation', () => {
    const link = signLink({
      baseUrl: BASE,
      action: 'snooze',
      subject: 'example.nl',
      finding: WARNING,
      keys,
      now: NOW,
    });
    expect(refusedOrVerdict(link.replace('example.nl', 'example.com'))).toBe('bad_signature');
    expect(refusedOrVerdict(link, NOW + 7 * 86_400_000)).toBe('expired');
    const token = Object.fromEntries(new URL(link).searchParams);
    expect(verifyLink({ action: 'snooze', subject: 'example.nl', token, keys: rotated, now: NOW }).ok).toBe(
      true,
    );
  });

  it('refuses an expiry written with a leading zero, which would otherwise carry the same signature', () => {
    const link = signLink({
      baseUrl: BASE,
      action: 'acknowledge',
      subject: 'example.nl',
      finding: WARNING,
      keys,
      now: NOW,
    });
    expect(refusedOrVerdict(link.replace('exp=', 'exp=0'))).toBe('malformed');
  });

  it('signs read-only links for the account only, and acting links for valid domains only', () => {
    expect(() =>
      signLink({ baseUrl: BASE, action: 'report', subject: 'example.nl', keys, now: NOW }),
    ).toThrow(/whole account/);
    expect(() => signLink({ baseUrl: BASE, action: 'snooze', keys, now: NOW })).toThrow(/no domain given/);
    expect(() =>
      signLink({ baseUrl: BASE, action: 'snooze', subject: ACCOUNT_SUBJECT, keys, now: NOW }),
    ).toThrow(/two labels/);
  });

  it('signs the finding into snooze and acknowledge links (only there), and refuses one that was changed', () => {
    expect(() =>
      signLink({ baseUrl: BASE, action: 'snooze', subject: 'example.nl', keys, now: NOW }),
    ).toThrow(/needs the kind and severity of the finding/);
    expect(() =>
      signLink({ baseUrl: BASE, action: 'restore', subject: 'example.nl', finding: WARNING, keys, now: NOW }),
    ).toThrow(/carries no finding/);
    const link = signLink({
      baseUrl: BASE,
      action: 'acknowledge',
      subject: 'example.nl',
      finding: WARNING,
      keys,
      now: NOW,
    });
    const token = Object.fromEntries(new URL(link).searchParams);
    expect(verifyLink({ action: 'acknowledge', subject: 'example.nl', token, keys, now: NOW })).toEqual({
      ok: true,
      exp: Number(token.exp),
      finding: WARNING,
    });
    for (const changed of [
      { ...token, sev: 'critical' },
      { ...token, sev: 'info' },
      { ...token, kind: 'quarantine' },
    ])
      expect(
        verifyLink({ action: 'acknowledge', subject: 'example.nl', token: changed, keys, now: NOW }),
      ).toEqual({
        ok: false,
        reason: 'bad_signature',
      });
    const { kind: _kind, ...noKind } = token;
    expect(
      verifyLink({ action: 'acknowledge', subject: 'example.nl', token: noKind, keys, now: NOW }),
    ).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it('tells a genuine link from before links named their finding (outdated) from a forged one', () => {
    const key = keys[0];
    if (!key) throw new Error('no key');
    const exp = Math.floor(NOW / 1000) + 3600;
    const sig = createHmac('sha256', key.secret)
      .update(`snooze\nexample.nl\n${exp}\n${key.id}`)
      .digest('base64url');
    const token = { exp: String(exp), kid: key.id, sig };
    expect(verifyLink({ action: 'snooze', subject: 'example.nl', token, keys, now: NOW })).toEqual({
      ok: false,
      reason: 'outdated',
      exp,
    });
    expect(verifyLink({ action: 'snooze', subject: 'example.com', token, keys, now: NOW })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('refuses every one-character change of any link (substitution, deletion or insertion)', () => {
    const links = [
      signLink({ baseUrl: BASE, action: 'restore', subject: 'example.nl', keys, now: NOW }),
      signLink({
        baseUrl: BASE,
        action: 'snooze',
        subject: 'shop.example.nl',
        finding: WARNING,
        keys,
        now: NOW,
      }),
      signLink({
        baseUrl: BASE,
        action: 'acknowledge',
        subject: 'xn--bcher-kva.de',
        finding: { kind: 'quarantine', severity: 'critical' },
        keys,
        now: NOW,
      }),
      signLink({ baseUrl: BASE, action: 'report', keys, now: NOW }),
      signLink({ baseUrl: BASE, action: 'calendar', keys, now: NOW }),
    ];
    const char = fc.oneof(
      fc.constantFrom('/', '\\', '?', '&', '=', '.', '-', '_', '%', '#', '0', 'A', 'a', 'é', ' '),
      fc.string({ minLength: 1, maxLength: 1 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...links),
        fc.constantFrom('substitute', 'delete', 'insert'),
        fc.nat(),
        char,
        (link, edit, at, ch) => {
          const i = BASE.length + (at % (link.length - BASE.length));
          const changed =
            edit === 'delete'
              ? link.slice(0, i) + link.slice(i + 1)
              : link.slice(0, i) + ch + link.slice(edit === 'insert' ? i : i + 1);
          // A change that leaves what the link says intact is the same link: the URL parser reads '\'
          // as '/', and an empty or extra query parameter ('&&', '&x') carries nothing signed.
          fc.pre(signedPart(changed) !== signedPart(link));
          const outcome = refusedOrVerdict(changed);
          expect(typeof outcome === 'string' ? 'refused' : outcome).toBe('refused');
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('parseLinkPath', () => {
  it.each([
    ['/restore/example.nl', { action: 'restore', subject: 'example.nl' }],
    ['/snooze/example.nl', { action: 'snooze', subject: 'example.nl' }],
    ['/acknowledge/xn--bcher-kva.de', { action: 'acknowledge', subject: 'xn--bcher-kva.de' }],
    ['/report', { action: 'report', subject: ACCOUNT_SUBJECT }],
    ['/calendar.ics', { action: 'calendar', subject: ACCOUNT_SUBJECT }],
  ])('routes %s', (path, route) => {
    expect(parseLinkPath(path)).toEqual(route);
  });

  it.each(['/', '/report/', '/snooze', '/snooze/a/b', '/unsnooze/example.nl', '/calendar', '/restore/'])(
    'routes nothing at %s',
    (path) => {
      expect(parseLinkPath(path)).toBeNull();
    },
  );
});
