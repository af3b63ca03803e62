import { describe, expect, it } from 'vitest';
import { shownSource } from '../../functions/core/registry/bootstrap';
import { RdapClient } from '../../functions/core/registry/rdap-client';
import { checkAt, NOW, names, record, server, status } from '../support/rdap-answers';

/**
 * A 404 that would be a finding is a finding only when the server repeats it: not when the server was
 * left alone before it could be asked again, nor when the second ask got no answer (a failure, the
 * scan's time); and the info line says why it is no finding.
 */

const check = async (...args: Parameters<typeof checkAt>) => (await checkAt(...args)).result;

describe('a 404 not asked again is no finding', () => {
  it('makes no finding of a 404 at a server left alone before it could be asked again', async () => {
    // known0-3 answer, lost.com 404s, then the server fails three times in a row and is left alone.
    const { fetch, asked } = server((name) =>
      name.startsWith('known') ? record(name) : name === 'lost.com' ? status(404) : status(500),
    );
    const result = await check([...names('known', 4), 'lost.com', ...names('fail', 3)], fetch);
    expect(asked.filter((n) => n === 'lost.com')).toHaveLength(1);
    expect(result.views.has('lost.com')).toBe(false);
    expect(result.counts.disagree).toBe(0);
    // Not a 404 the registry stood by: not checked (its server failed), not "does not know".
    expect(result.counts).toMatchObject({
      checked: 4,
      not_checkable: { not_found: 0 },
      not_checked: { server_failed: 4, time: 0 },
    });
    const reasons = result.problems.map((p) => p.reason).join('\n');
    expect(reasons).toMatch(/answered HTTP 404 once for 1 domain.*lost\.com.*not asked again.*not checked/);
    expect(reasons).not.toMatch(/does not know/);
  });

  it('counts a 404 at a server then left alone for a run of 400s as not checked, not as unknown to the registry', async () => {
    const { fetch, asked } = server((name) =>
      name.startsWith('known') ? record(name) : name === 'lost.com' ? status(404) : status(400),
    );
    const result = await check([...names('known', 4), 'lost.com', ...names('odd', 10)], fetch);
    expect(asked.filter((n) => n === 'lost.com')).toHaveLength(1);
    expect(result.views.has('lost.com')).toBe(false);
    expect(result.counts).toMatchObject({
      checked: 4,
      not_checkable: { not_found: 0 },
      not_checked: { server_failed: 1, name_refused: 10 },
    });
  });

  it('says why a 404 whose second ask got no answer (404 then 429) is no finding', async () => {
    const { fetch } = server((name, times) =>
      name === 'lost.com' ? status(times === 1 ? 404 : 429) : record(name),
    );
    const result = await check([...names('known', 4), 'lost.com'], fetch);
    expect(result.views.has('lost.com')).toBe(false);
    expect(result.counts).toMatchObject({
      checked: 4,
      not_checkable: { not_found: 0 },
      not_checked: { server_failed: 1, time: 0 },
    });
    expect(result.problems.map((p) => p.reason).join('\n')).toMatch(
      /answered HTTP 404 once for 1 domain.*lost\.com.*no answer when asked again/,
    );
  });

  it('says why a 404 whose second ask met the end of the scan time is no finding', async () => {
    let clock = NOW;
    const deadline = NOW + 60_000;
    const { fetch } = server((name) => {
      if (name === 'known3.com') clock = deadline + 1; // the clock jumps past the deadline before the re-ask
      return name === 'lost.com' ? status(404) : record(name);
    });
    const client = new RdapClient({
      fetch,
      sleep: async () => undefined,
      maxAttempts: 1,
      now: () => clock,
      deadline: () => deadline,
    });
    const result = await check(['lost.com', ...names('known', 4)], fetch, client);
    expect(result.views.has('lost.com')).toBe(false);
    // Its second ask never happened: not checked for lack of time, not "the registry does not know it".
    expect(result.counts).toMatchObject({
      checked: 4,
      not_checkable: { not_found: 0 },
      not_checked: { time: 1, server_failed: 0 },
    });
    expect(result.problems.map((p) => p.reason).join('\n')).toMatch(
      /answered HTTP 404 once for 1 domain.*lost\.com.*the scan's time ran out/,
    );
  });
});

describe('a server that answers 400 to every lookup', () => {
  it('says once that it was left alone, not after 0 failed lookups in a row', async () => {
    const { fetch } = server(() => status(400));
    const result = await check(names('a', 10), fetch);
    const reasons = result.problems.map((p) => p.reason).join('\n');
    expect(reasons).toMatch(/left alone/);
    expect(reasons).not.toMatch(/after 0 failed/);
    expect(reasons.match(/left alone/g)).toHaveLength(1);
  });
});

describe('a token of letters only in a bootstrap URL path', () => {
  it('hides a long mixed-case or base64url segment without a digit, keeps words', () => {
    expect(shownSource('https://cdn.example/QwErTyUiOpAsDfGhJk/dns.json')).toBe(
      'https://cdn.example/…/dns.json',
    );
    expect(shownSource('https://cdn.example/abcdefghiJklmnop_qrstuvwx-yz/dns.json')).toBe(
      'https://cdn.example/…/dns.json',
    );
    // 16 characters or more is no plain short word, however it reads (rdap-shown-url.test.ts).
    expect(shownSource('https://cdn.example/registration-data/dns.json')).toBe(
      'https://cdn.example/…/dns.json',
    );
    expect(shownSource('https://cdn.example/registry/dns.json')).toBe(
      'https://cdn.example/registry/dns.json',
    );
    expect(shownSource('https://rdap.example/rdap-bootstrap.json')).toBe(
      'https://rdap.example/rdap-bootstrap.json',
    );
  });
});
