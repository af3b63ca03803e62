import { afterEach, describe, expect, it } from 'vitest';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { checkRegistry, type RegistryCandidate } from '../../functions/core/registry/registry-check';
import { farCandidate } from '../support/rdap-answers';
import { startRdapRegistry } from '../support/rdap-registry';

/**
 * A working gTLD registry whose first answers are 404s for domains deleted at the registry (the
 * reseller still lists them): ten of them must not leave it alone as a server that knows nothing,
 * or the scan loses exactly the findings it exists for, when there are several of them.
 */

const NOW = Date.parse('2026-11-22T06:00:00Z');
const DAY = 86_400_000;
const EXPIRY = NOW + 200 * DAY;
const POLICY = { toleranceDays: 2, criticalDays: 7 };

const candidate = farCandidate;
const many = (prefix: string, n: number, reason: RegistryCandidate['reason'], extra = {}) =>
  Array.from({ length: n }, (_, i) => candidate(`${prefix}${i}.com`, reason, i, extra));

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/**
 * The check of `candidates` at a `.com` registry on loopback that knows every name but those
 * starting `deleted` (or as `known` says).
 */
async function checkAtRegistry(
  candidates: readonly RegistryCandidate[],
  perServer?: number,
  known = (name: string): number | null => (name.startsWith('deleted') ? null : EXPIRY),
) {
  const registry = await startRdapRegistry({ tlds: ['com'], known });
  close = registry.close;
  const result = await checkRegistry({
    candidates,
    bootstrap: registry.bootstrap,
    client: new RdapClient({ maxAttempts: 1, sleep: async () => undefined }),
    now: NOW,
    budget: 1000,
    policy: POLICY,
    ...(perServer ? { perServer } : {}),
  });
  const found = [...result.views].map(([name, view]) => `${name} ${view.kind} ${view.severity}`).sort();
  return { result, found, asked: registry.asked };
}

describe('checkRegistry at a working registry whose first answers are 404s for deleted domains', () => {
  it('finds ten domains deleted at the registry that come first: the registry knows the others, so it is not left alone', async () => {
    const deleted = many('deleted', 10, 'sample', { date_expiry: NOW + 3 * DAY });
    const others = many('kept', 40, 'sample').map((c) => ({ ...c, rank: 10 + c.rank }));
    const { result, found, asked } = await checkAtRegistry([...deleted, ...others]);
    expect(found).toEqual(deleted.map((c) => `${c.domain_name} registry_unknown critical`).sort());
    expect(result.counts).toMatchObject({
      checked: 50,
      agree: 40,
      disagree: 10,
      not_checked: { budget: 0, time: 0, server_failed: 0, name_refused: 0 },
    });
    expect(result.problems).toEqual([]);
    expect(asked).toHaveLength(60); // each 404 asked once more before it is believed
  });

  it("asks its control from the sample, not the reseller's flagged domains, whose troubles come together", async () => {
    const deleted = many('deleted', 13, 'flagged');
    const { result, found } = await checkAtRegistry([...deleted, ...many('kept', 30, 'sample')], 1);
    expect(found).toEqual(deleted.map((c) => `${c.domain_name} registry_unknown warning`).sort());
    expect(result.counts).toMatchObject({ agree: 30, not_checked: { server_failed: 0 } });
  });

  it('asks as control a domain the reseller lists as active: not one in quarantine, added within a day or expired, which a working registry may not know', async () => {
    const deleted = many('deleted-f', 10, 'flagged');
    const sample = [
      ...many('deleted-q', 3, 'sample', { quarantine: true }),
      ...many('deleted-n', 3, 'sample', { date_created: NOW - 3_600_000 }),
      ...many('deleted-x', 3, 'sample', { date_expiry: NOW - 2 * DAY }),
      ...many('kept', 20, 'sample'),
    ].map((c, i) => ({ ...c, rank: i }));
    const { result, found } = await checkAtRegistry([...deleted, ...sample], 1);
    expect(found).toEqual(
      [
        ...deleted.map((c) => `${c.domain_name} registry_unknown warning`),
        ...['deleted-x0.com', 'deleted-x1.com', 'deleted-x2.com'].map(
          (n) => `${n} registry_unknown critical`,
        ),
      ].sort(),
    );
    expect(result.counts).toMatchObject({ agree: 20, not_checkable: { not_found: 6 } });
  });

  it('still leaves alone a registry that knows none, once ten 404s and three controls said so', async () => {
    const { result, asked } = await checkAtRegistry(many('deleted', 30, 'sample'), 1);
    expect(asked).toHaveLength(13);
    expect(result.views.size).toBe(0);
    expect(result.counts.not_checked.server_failed).toBe(17);
  });
});

describe('checkRegistry at a registry that breaks in the middle of the scan', () => {
  it('leaves it alone once it answers 404 to ten lookups in a row and three controls: its 404s after records it gave are no findings', async () => {
    // A backend that fails over to an empty database answers 404 for every name from then on: after
    // thirty records, twenty 404s passed judgeUnknown (no more unknown than known) and, asked again,
    // 404 again: twenty domains the registry holds announced as deleted there, critical near expiry.
    let answered = 0;
    const { result, found, asked } = await checkAtRegistry(many('kept', 60, 'sample'), 1, () =>
      ++answered <= 30 ? EXPIRY : null,
    );
    expect(found).toEqual([]);
    expect(asked).toHaveLength(43);
    expect(result.counts).toMatchObject({ agree: 30, not_checked: { server_failed: 17 + 13 } });
    expect(result.problems.map((p) => p.reason)).toContainEqual(
      'it answered 13 lookups in a row with HTTP 404 or 410 after knowing 30 of the domains asked, not even 3 the reseller lists as active asked to confirm it: its 404s say nothing of them; left alone for the rest of this scan',
    );
  });

  it('goes on at a registry that knew domains when no domain the reseller lists as active is left to confirm it: ten deleted near the end are still findings', async () => {
    const sample = [
      ...many('kept', 30, 'sample'),
      ...many('deleted', 10, 'sample'),
      ...many('deleted-q', 5, 'sample', { quarantine: true }),
    ].map((c, i) => ({ ...c, rank: i }));
    const { result, found } = await checkAtRegistry(sample, 1);
    expect(found).toEqual(
      many('deleted', 10, 'sample')
        .map((c) => `${c.domain_name} registry_unknown warning`)
        .sort(),
    );
    expect(result.counts).toMatchObject({ agree: 30, not_checked: { server_failed: 0 } });
  });

  it('leaves it alone when the controls it could be asked were 404s too and none is left: its expired domains after them are no findings', async () => {
    // Broken after thirty records: ten 404s put it in doubt, the two domains left that the reseller
    // lists as active answered 404 as controls, then only expired domains (never controls) are left.
    // Going on made its fifteen 404s of those, and the twelve before, critical and warning findings.
    let answered = 0;
    const sample = [
      ...many('kept', 42, 'sample'),
      ...many('lapsed', 15, 'sample', { date_expiry: NOW - 3 * DAY }),
    ].map((c, i) => ({ ...c, rank: i }));
    const { result, found, asked } = await checkAtRegistry(sample, 1, () =>
      ++answered <= 30 ? EXPIRY : null,
    );
    expect(found).toEqual([]);
    expect(asked).toHaveLength(42);
    expect(result.counts).toMatchObject({ agree: 30, not_checked: { server_failed: 15 + 12 } });
    expect(result.problems.map((p) => p.reason)).toContainEqual(
      'it answered 12 lookups in a row with HTTP 404 or 410 after knowing 30 of the domains asked, not even 2 the reseller lists as active asked to confirm it: its 404s say nothing of them; left alone for the rest of this scan',
    );
  });
});
