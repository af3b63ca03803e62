import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/docs';
import { anchorsOf, slug } from '../support/doc-links';
import { type CodeMessage, codeMessages, quotesMessage, WILD } from '../support/error-messages';

/**
 * docs/troubleshooting.md has a row for every error message of the code, and every row of its
 * message tables is a message the code can give. A row quotes a message (or a telling part of it)
 * with `…` or `<name>` where the code puts a value in, or with an example value there.
 */

const DOC = 'docs/troubleshooting.md';
const doc = readFileSync(join(ROOT, DOC), 'utf8');

/** Constructions whose message is not written out where they are, and the row that covers them. */
const COVERED_ELSEWHERE: ReadonlyArray<{
  readonly construction: RegExp;
  readonly row: string;
  readonly why: string;
}> = [
  {
    construction:
      /^(bin\/args\.ts|functions\/core\/scan\/config\.ts):\d+: new ConfigError\((problems\.join|parsed\.error\.issues|issuesOf\()/,
    row: '`RESELLER_BASE_URL (--base-url) is required`',
    why: 'each setting’s own schema message, joined; one row explains the form, configuration.md the values',
  },
  {
    construction: /^lib\/config\.ts:\d+: new ConfigError\((problems\.join|unknown\.map)/,
    row: '`invalid context: unknown setting alertEmail; did you mean alertEmails?`',
    why: 'the deploy settings’ schema messages and unknown keys, joined; the rows of Deploying show the forms',
  },
  {
    construction: /^functions\/aws\/dynamodb-state-store\.ts:\d+: new StateConflictError\(conflict\)/,
    row: '`another scan moved the state on or holds its lease (…, generation 7)`',
    why: 'the message is the second argument of conditional(); its callers pass the texts of the row',
  },
  {
    construction: /^functions\/core\/memory\/state-header\.ts:\d+: new StateDamagedError\(stateIssue\(/,
    row: '`the state in state.json cannot be used (domains["example.nl"].alerted.at: not an RFC 3339 date-time: "garbage"); correct that value, point --state elsewhere, or remove the state to start over`',
    why: 'the damaged head says what stateIssue says of any state that cannot be used; its row shows the form',
  },
  {
    construction: /^functions\/core\/scan\/policies\.ts:\d+: new ConfigError\((top\.error|problems)/,
    row: '`policies file policies.json: policies[1] ("vip"): unknown key criticalDay; did you mean criticalDays?`',
    why: 'a policies file’s problems, each with its place, joined; the row shows the form',
  },
  {
    construction: /^functions\/core\/reseller\/paging\.ts:\d+: new IncompleteListingError\((moved\.)?text\)/,
    row: '`total_results changed from 500 to 501 while domain list pages were read (page 3): the account changed during the scan`',
    why: 'a listing that moved: one text made where it is seen, thrown or (the last read) reported; the three rows of what can move show them',
  },
  {
    construction: /^bin\/commands\/restore\.ts:\d+: new SentinelError\(notRestoredFor404\(domain\)\)/,
    row: '`example.nl was not restored`',
    why: 'the restore link’s own words for a look-up answered 404 (decisions/restore.ts notRestoredFor404), which its row explains for both',
  },
];

/** The quoted messages of the rows of every table whose first column is headed "message". */
function rows(markdown: string): Array<{ line: number; quotes: string[] }> {
  const found: Array<{ line: number; quotes: string[] }> = [];
  let checked = false;
  for (const [i, line] of markdown.split('\n').entries()) {
    if (/^\| *message *\|/.test(line)) checked = true;
    else if (/^\| *you see *\|/.test(line)) checked = false;
    if (!checked || !line.startsWith('| `')) continue;
    const first = line.slice(2).split(/ \| /)[0] as string;
    const quotes = [...first.matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).replace(/\\\|/g, '|'));
    found.push({ line: i + 1, quotes });
  }
  return found;
}

/** A quoted row as a pattern: `…` and `<name>` stand for any value. */
const rowPattern = (quote: string) => quote.replace(/…|<[\w-]+>/g, WILD);

const telling = (row: string, message: CodeMessage) => quotesMessage(row, message.pattern);

const { messages, dynamic } = codeMessages(ROOT);
const table = rows(doc);
const quotes = table.flatMap((r) =>
  r.quotes.map((q) => ({ line: r.line, quote: q, pattern: rowPattern(q) })),
);

describe('docs/troubleshooting.md and the code’s messages', () => {
  it('reads the messages from the code (the extractor itself)', () => {
    expect(messages.length).toBeGreaterThan(100);
    const texts = messages.map((m) => m.pattern);
    expect(texts).toContain(`unknown command ${WILD}; ${WILD}`);
    expect(texts).toContain('This link has expired');
    expect(texts).toContain(`could not write the output (${WILD}); it did not arrive whole`);
    expect(messages.some((m) => m.where.startsWith('functions/simulator/'))).toBe(false);
  });

  it('has a row for every message of the code', () => {
    const missing = messages
      .filter((m) => m.pattern.replaceAll(WILD, '').trim().length > 0)
      .filter((m) => !quotes.some((q) => telling(q.pattern, m)))
      .map((m) => `${m.where}: ${m.pattern.replaceAll(WILD, '…')}`);
    expect(missing, `add a row to ${DOC} for each`).toEqual([]);
  });

  it('has no row for a message the code no longer gives', () => {
    const stale = table
      .filter((r) => !r.quotes.some((q) => messages.some((m) => telling(rowPattern(q), m))))
      .map((r) => `${DOC}:${r.line}: ${r.quotes.join(' / ')}`);
    expect(stale).toEqual([]);
  });

  it('knows where every message not written out in its construction is explained', () => {
    const unexplained = dynamic.filter((d) => !COVERED_ELSEWHERE.some((c) => c.construction.test(d)));
    expect(unexplained).toEqual([]);
    for (const covered of COVERED_ELSEWHERE) expect(doc, covered.why).toContain(`| ${covered.row}`);
  });

  it('matches a row to a message by its fixed text, wherever either has a value (the matcher itself)', () => {
    const code = `the reseller API refused the API key (HTTP 401) for ${WILD}; check RESELLER_API_KEY`;
    expect(quotesMessage('the reseller API refused the API key (HTTP 401)', code)).toBe(true);
    expect(quotesMessage(`refused the API key (HTTP 401) for ${WILD}; check`, code)).toBe(true);
    expect(quotesMessage('refused the API key (HTTP 401) for example.nl (https://x); check', code)).toBe(
      true,
    );
    expect(quotesMessage('the reseller API refused the API key (HTTP 403)', code)).toBe(false);
    expect(quotesMessage('RESELLER_BASE_URL (--base-url) is required', `${WILD} is required`)).toBe(true);
    // Fitting into the code's values alone is not quoting it.
    expect(quotesMessage('EXPIRY_DAYS is required', `${WILD} must be ${WILD}`)).toBe(false);
    expect(quotesMessage(`${WILD}: ${WILD}`, `could not read ${WILD}: ${WILD}`)).toBe(false);
    expect(quotesMessage('Unavailable', 'Unavailable')).toBe(true);
    expect(quotesMessage('Not allowed', 'Not a valid domain name')).toBe(false);
  });
});

/**
 * The documents a message sends its reader to: `docs/chat.md`, `memory.md#time`, and a section by
 * its title (`README: "On a real account"`). Each as a file and, where named, its anchor.
 */
function docReferences(text: string): Array<{ readonly file: string; readonly anchor?: string }> {
  const found: Array<{ file: string; anchor?: string }> = [];
  const fileOf = (name: string) => (/^README(\.md)?$/.test(name) ? 'README.md' : `docs/${name}`);
  for (const m of text.matchAll(/(?:docs\/)?\b([\w-]+\.md)(?:#([\w-]+))?/g))
    found.push({ file: fileOf(m[1] as string), ...(m[2] ? { anchor: m[2] } : {}) });
  for (const m of text.matchAll(/\b(README|[\w-]+\.md)(?:\.md)?:? ["“]([^"”]+)["”]/g))
    found.push({ file: fileOf(m[1] as string), anchor: slug(m[2] as string) });
  return found;
}

/** Why a reference leads nowhere, or undefined when its file and section exist. */
function brokenReference(ref: { readonly file: string; readonly anchor?: string }): string | undefined {
  const path = join(ROOT, ref.file);
  if (!existsSync(path)) return `${ref.file} does not exist`;
  if (ref.anchor && !anchorsOf(readFileSync(path, 'utf8')).has(ref.anchor))
    return `${ref.file} has no section #${ref.anchor}`;
  return undefined;
}

describe('the documents an error message names', () => {
  it('exist, with the section named, for every message of the code and every row of the table', () => {
    const texts = [
      ...messages.map((m) => ({ where: m.where, text: m.pattern.replaceAll(WILD, '…') })),
      ...quotes.map((q) => ({ where: `${DOC}:${q.line}`, text: q.quote })),
    ];
    const broken = texts.flatMap(({ where, text }) =>
      docReferences(text).flatMap((ref) => {
        const why = brokenReference(ref);
        return why ? [`${where}: ${why}`] : [];
      }),
    );
    expect(broken).toEqual([]);
    // Some messages do name documents: the check has something to check.
    expect(texts.filter((t) => docReferences(t.text).length > 0).length).toBeGreaterThanOrEqual(5);
  });

  it('finds a file, a file’s section and a section by its title (the finder itself)', () => {
    expect(docReferences('see docs/accounts.md, or memory.md#time')).toEqual([
      { file: 'docs/accounts.md' },
      { file: 'docs/memory.md', anchor: 'time' },
    ]);
    expect(docReferences('export the key (see README: "On a real account")')).toEqual([
      { file: 'README.md', anchor: 'on-a-real-account' },
    ]);
    expect(brokenReference({ file: 'README.md', anchor: 'using-it-on-a-real-account' })).toBe(
      'README.md has no section #using-it-on-a-real-account',
    );
    expect(brokenReference({ file: 'docs/costs-of-nothing.md' })).toBe(
      'docs/costs-of-nothing.md does not exist',
    );
  });
});
