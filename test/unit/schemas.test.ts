import { describe, expect, it } from 'vitest';
import {
  ContactSchema,
  DomainSchema,
  describeIssues,
  PaginationSchema,
  parseRfc3339,
} from '../../functions/core/reseller/schemas';

describe('parseRfc3339', () => {
  it.each([
    ['2026-11-22T06:00:00Z', '2026-11-22T06:00:00.000Z'],
    ['2026-11-22T08:00:00+02:00', '2026-11-22T06:00:00.000Z'],
    ['2026-11-22T01:30:00-04:30', '2026-11-22T06:00:00.000Z'],
    ['2026-11-22T06:00:00.123456789Z', '2026-11-22T06:00:00.123Z'],
    ['2026-11-22t06:00:00.5z', '2026-11-22T06:00:00.500Z'],
    ['2026-11-22 06:00:00Z', '2026-11-22T06:00:00.000Z'],
    // RFC 3339 allows a leap second (5.7): read as the instant after it, the next second.
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2017-01-01T00:59:60.5+01:00', '2017-01-01T00:00:00.000Z'],
  ])('reads %s', (text, iso) => {
    expect(new Date(parseRfc3339(text)).toISOString()).toBe(iso);
  });

  it.each([
    '2026-11-22',
    '2026-13-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '22 Nov 2026',
    '2026-11-22T06:00:00',
    '2026-11-22T06:00:61Z',
    '',
  ])('rejects %s', (text) => {
    expect(parseRfc3339(text)).toBeNaN();
  });
});

describe('DomainSchema', () => {
  const base = { domain_name: 'Example.NL', date_expiry: '2027-01-01T00:00:00Z' };

  it('reads the documented field names', () => {
    expect(
      DomainSchema.parse({
        ...base,
        status: ['registered'],
        auto_renew: true,
        auto_renew_period: 12,
        registrant_handle: 'C1',
      }),
    ).toEqual({
      domain_name: 'example.nl',
      status: ['registered'],
      date_expiry: Date.parse('2027-01-01T00:00:00Z'),
      auto_renew: true,
      auto_renew_period: 12,
      date_deleted: null,
      registrant_handle: 'C1',
    });
  });

  it('accepts every alias the documentation shows', () => {
    const d = DomainSchema.parse({
      ...base,
      auto_renewal: false,
      auto_renewal_period: 24,
      registant_handle: 'C2',
    });
    expect(d).toMatchObject({ auto_renew: false, auto_renew_period: 24, registrant_handle: 'C2' });
  });

  it('reads when the domain was added to the account, and a date_created it cannot read as not given', () => {
    const at = '2026-11-22T05:55:00Z';
    expect(DomainSchema.parse({ ...base, date_created: at }).date_created).toBe(Date.parse(at));
    for (const bad of ['yesterday', 7, null])
      expect(DomainSchema.parse({ ...base, date_created: bad })).not.toHaveProperty('date_created');
  });

  it('tolerates omitted optional fields, null auto-renew and a status sent as a string', () => {
    expect(DomainSchema.parse({ ...base, status: 'quarantine', auto_renew: null })).toMatchObject({
      status: ['quarantine'],
      auto_renew: null,
      registrant_handle: null,
    });
  });

  it('reads a record whose two spellings of a field disagree by the spelling of the examples, keeping its finding', () => {
    // A problem record would cost the domain its findings (an expiring one would be a warning
    // announced once instead of a critical repeated daily) over fields that decide no risk.
    expect(
      DomainSchema.parse({
        ...base,
        registrant_handle: 'A',
        registant_handle: 'B',
        auto_renew_period: 12,
        auto_renewal_period: '24',
      }),
    ).toMatchObject({ registrant_handle: 'A', registrant_conflict: ['A', 'B'], auto_renew_period: 12 });
  });

  it('reads two spellings that agree, and a null under one of them as no value', () => {
    expect(
      DomainSchema.parse({
        ...base,
        registrant_handle: 'C1',
        registant_handle: 'C1',
        auto_renew: true,
        auto_renewal: 'true',
        auto_renew_period: '12',
        auto_renewal_period: 12,
      }),
    ).toMatchObject({ registrant_handle: 'C1', auto_renew: true, auto_renew_period: 12 });
    expect(
      DomainSchema.parse({
        ...base,
        registrant_handle: null,
        registant_handle: 'C2',
        auto_renew_period: null,
      }),
    ).toMatchObject({ registrant_handle: 'C2', auto_renew_period: null });
  });

  it('reads auto-renew as off when its two spellings disagree, whichever comes first', () => {
    // A problem record would lose the domain its finding: an expiring domain would be a warning
    // announced once instead of a critical repeated daily. Off is the reading that alerts most.
    for (const [auto_renew, auto_renewal] of [
      [true, false],
      [false, true],
      ['true', false],
    ])
      expect(DomainSchema.parse({ ...base, auto_renew, auto_renewal }).auto_renew).toBe(false);
  });

  it('names the field that does not parse', () => {
    const result = DomainSchema.safeParse({ ...base, date_expiry: 'soon' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['date_expiry']);
  });

  it.each([
    [undefined, 'date_expiry: missing'],
    [null, 'date_expiry: null instead of an RFC 3339 date-time'],
    [20270101, 'date_expiry: a number instead of an RFC 3339 date-time'],
    [{}, 'date_expiry: an object instead of an RFC 3339 date-time'],
    ['soon', 'date_expiry: not an RFC 3339 date-time: "soon"'],
  ])('says in words what stands where a date should (%j)', (value, reason) => {
    const result = DomainSchema.safeParse({ ...base, date_expiry: value });
    expect(result.success ? 'parsed' : describeIssues(result.error)).toBe(reason);
  });
});

describe('DomainSchema on odd values a server may send', () => {
  const base = { domain_name: 'example.nl', date_expiry: '2027-01-01T00:00:00Z' };

  it.each([
    [{ auto_renew: 'yes' }, 'auto_renew: not a boolean: "yes"'],
    [{ auto_renewal: 1 }, 'auto_renewal: not a boolean: 1'],
    [{ auto_renew_period: '12.0' }, 'auto_renew_period: not an integer: "12.0"'],
    [
      { auto_renew_period: '99999999999999999999' },
      'auto_renew_period: not an integer: "99999999999999999999"',
    ],
    [{ status: 5 }, 'status: not a list of strings: 5'],
    [{ status: ['registered', 7] }, 'status: not a list of strings: ["registered",7]'],
  ])('says in words what is wrong with %j', (fields, reason) => {
    const result = DomainSchema.safeParse({ ...base, ...fields });
    expect(result.success ? 'parsed' : describeIssues(result.error)).toBe(reason);
  });
});

describe('DomainSchema quoting a long value in a reason', () => {
  it('cuts it whole characters at a time, never leaving half of one (an emoji) for mail to show as ?', () => {
    // One ASCII letter, then emoji: 41 UTF-16 units of the quoted text end in half of one.
    const value = `a${'\u{1F600}'.repeat(30)}`;
    const result = DomainSchema.safeParse({
      domain_name: 'example.nl',
      date_expiry: '2027-01-01T00:00:00Z',
      auto_renew: value,
    });
    const reason = result.success ? 'parsed' : describeIssues(result.error);
    expect(reason).toMatch(/^auto_renew: not a boolean: "a\u{1F600}+…$/u);
    expect(reason).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe('ContactSchema', () => {
  it('accepts connections as a string or an integer and fills omitted fields', () => {
    expect(ContactSchema.parse({ handle: 'C1', connections: '5' })).toEqual({
      handle: 'C1',
      name: '',
      company_name: '',
      email: '',
      status: [],
      connections: 5,
    });
    expect(ContactSchema.parse({ handle: 'C1', connections: 3 }).connections).toBe(3);
  });

  it('refuses connections written as a number beyond what a double holds exactly', () => {
    const result = ContactSchema.safeParse({ handle: 'C1', connections: '12345678901234567891' });
    expect(result.success ? 'parsed' : describeIssues(result.error)).toBe(
      'connections: not an integer: "12345678901234567891"',
    );
  });
});

describe('PaginationSchema', () => {
  it('accepts page as the alias of current_page', () => {
    expect(PaginationSchema.parse({ page: 2, per_page: 50, total_pages: 3, total_results: 120 })).toEqual({
      current_page: 2,
      per_page: 50,
      total_pages: 3,
      total_results: 120,
    });
  });

  it('reads a page number sent as null as one not sent, the other naming the page', () => {
    // The API omits fields without a value; a server that sends them as null must not lose the page.
    const pagination = { per_page: 50, total_pages: 3, total_results: 120 };
    expect(PaginationSchema.parse({ current_page: 2, page: null, ...pagination }).current_page).toBe(2);
    expect(PaginationSchema.parse({ current_page: null, page: 2, ...pagination }).current_page).toBe(2);
    expect(PaginationSchema.safeParse({ current_page: null, page: null, ...pagination }).success).toBe(false);
  });

  it('accepts current_page and page together when they agree', () => {
    expect(
      PaginationSchema.parse({ current_page: 2, page: '2', per_page: 50, total_pages: 3, total_results: 120 })
        .current_page,
    ).toBe(2);
  });

  it('rejects a pagination whose current_page and page disagree', () => {
    const result = PaginationSchema.safeParse({
      current_page: 2,
      page: 3,
      per_page: 50,
      total_pages: 3,
      total_results: 120,
    });
    expect(result.success ? 'parsed' : describeIssues(result.error)).toBe(
      'record: current_page (2) and page (3) disagree',
    );
  });

  it('rejects a pagination without a page number', () => {
    expect(PaginationSchema.safeParse({ per_page: 50, total_pages: 3, total_results: 120 }).success).toBe(
      false,
    );
  });
});
