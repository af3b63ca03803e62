import { notJsonReason } from '../base/json';
import type { Finding } from '../findings/classify';
import { type ChangeSubject, changeNextStep, nextStep } from '../findings/next-step';
import type { Report } from '../scan/scan';

/**
 * The report as JSON text in pieces, so nothing has to hold it as one string: at 1 000 000 domains
 * it is some 100 MB (145 000 findings with their links), which a Lambda would hold two or three
 * times over while writing it. Pure.
 *
 * Two forms:
 * - the stored form ({@link reportLines}): one JSON value, but every element of the four lists that
 *   grow with an account (findings, problems, changes, resolved) on a line of its own after the
 *   small fields, so a reader can take one element at a time (report-view.ts);
 * - the printed form ({@link prettyReportJson}): exactly `JSON.stringify(report, null, 2)`.
 *
 * In both, each finding and each change ends with its `next_step` (findings/next-step.ts): made as
 * it is written, never kept on the report (a string per finding is some 20 MB at a million domains).
 */

/** The report's lists that grow with the account, in the order the stored form writes them. */
export const REPORT_LISTS = ['findings', 'problems', 'changes', 'resolved'] as const;
export type ReportList = (typeof REPORT_LISTS)[number];

/** Text is handed out in pieces of about this many characters. */
const PIECE = 64 * 1024;

const isList = (key: string): key is ReportList => (REPORT_LISTS as readonly string[]).includes(key);

/** An element of a list as JSON carries it: a finding or a change with its `next_step` last. */
export function jsonElement(list: ReportList, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (list === 'findings') return { ...value, next_step: nextStep(value as Finding) };
  if (list === 'changes') return { ...value, next_step: changeNextStep(value as ChangeSubject) };
  return value;
}

/** The report with every finding and change carrying its `next_step`, as the JSON forms write it. */
export function withNextSteps<R extends Report>(report: R): R {
  const changes = (report as { changes?: unknown }).changes;
  return {
    ...report,
    findings: report.findings.map((f) => jsonElement('findings', f)),
    ...(Array.isArray(changes) ? { changes: changes.map((c) => jsonElement('changes', c)) } : {}),
  };
}

/**
 * The stored form, in pieces: `{<small fields>,"findings":[` then one element a line, `]` and the
 * next list on the line after the last element, `]}` at the end. JSON.stringify never writes a raw
 * line break inside a value, so a line is always one element.
 */
export function* reportLines(report: Report): Generator<string> {
  const small: Record<string, unknown> = {};
  const lists: Array<[ReportList, readonly unknown[]]> = [];
  for (const [key, value] of Object.entries(report)) {
    if (isList(key) && Array.isArray(value)) lists.push([key, value]);
    else small[key] = value;
  }
  let piece = JSON.stringify(small).slice(0, -1);
  let first = piece === '{';
  for (const [key, values] of lists) {
    piece += `${first ? '' : ','}${JSON.stringify(key)}:[`;
    first = false;
    for (let i = 0; i < values.length; i++) {
      piece += `\n${JSON.stringify(jsonElement(key, values[i] ?? null))}${i + 1 < values.length ? ',' : ''}`;
      if (piece.length >= PIECE) {
        yield piece;
        piece = '';
      }
    }
    piece += '\n]';
  }
  yield `${piece}}\n`;
}

/**
 * `JSON.stringify(report, null, 2)` (and `end` after it), in pieces: the lists element by element,
 * the rest as it is.
 */
export function* prettyReportJson(report: Report, end = ''): Generator<string> {
  const indent = (text: string, by: string) => text.replace(/\n/g, `\n${by}`);
  const entries = Object.entries(report).filter(
    ([, value]) => value !== undefined && typeof value !== 'function',
  );
  let piece = '{';
  for (let e = 0; e < entries.length; e++) {
    const [key, value] = entries[e] as [string, unknown];
    piece += `\n  ${JSON.stringify(key)}: `;
    if (isList(key) && Array.isArray(value) && value.length > 0) {
      piece += '[';
      for (let i = 0; i < value.length; i++) {
        piece += `\n    ${indent(JSON.stringify(jsonElement(key, value[i] ?? null), null, 2), '    ')}${i + 1 < value.length ? ',' : ''}`;
        if (piece.length >= PIECE) {
          yield piece;
          piece = '';
        }
      }
      piece += '\n  ]';
    } else {
      piece += indent(JSON.stringify(value, null, 2), '  ');
    }
    if (e + 1 < entries.length) piece += ',';
  }
  yield `${piece}${entries.length ? '\n' : ''}}${end}`;
}

/** Everything the stored form held, taken one element at a time. */
export interface ReportReader {
  /** The small fields, before any list. */
  head(value: Record<string, unknown>): void;
  /** A list begins (also an empty one: a stored report with `changes` is a report with memory). */
  open(list: ReportList): void;
  /** One element of a list. */
  element(list: ReportList, value: unknown): void;
}

/** The stored text is not a report: its place and what is wrong (the caller wraps it). */
export class ReportTextError extends Error {
  override readonly name: string = 'ReportTextError';
}

const OPENING = /(,?)"(findings|problems|changes|resolved)":\[$/;

/**
 * Reads stored report text (the stored form, {@link reportLines}), element by element, into
 * `reader`. Throws ReportTextError for text that is not JSON, not an object, or not that form.
 */
export async function readReportText(chunks: AsyncIterable<string>, reader: ReportReader): Promise<void> {
  const lines = new StoredLines(reader);
  let pending = '';
  for await (const chunk of chunks) {
    pending += chunk;
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
      lines.line(pending.slice(start, nl));
      start = nl + 1;
    }
    pending = pending.slice(start);
  }
  if (pending.trim() !== '') lines.line(pending);
  if (!lines.done)
    throw new ReportTextError(
      lines.started ? 'it ends before the report does' : 'it is not JSON (it is empty)',
    );
}

/** The stored form, one line at a time: the small fields and a list's opening, elements, list ends. */
class StoredLines {
  private lineNo = 0;
  private list: ReportList = 'findings';
  done = false;

  constructor(private readonly reader: ReportReader) {}

  get started(): boolean {
    return this.lineNo > 0;
  }

  line(text: string): void {
    this.lineNo++;
    if (this.lineNo === 1) {
      this.head(text);
      return;
    }
    if (this.done) {
      if (text.trim() === '') return;
      throw new ReportTextError(`line ${this.lineNo} follows the end of the report`);
    }
    if (!text.startsWith(']')) {
      this.reader.element(
        this.list,
        parse(text.endsWith(',') ? text.slice(0, -1) : text, `line ${this.lineNo}`),
      );
      return;
    }
    const rest = text.slice(1);
    if (rest === '}') {
      this.done = true;
      return;
    }
    const next = OPENING.exec(rest);
    if (next?.index !== 0 || next[1] !== ',')
      throw new ReportTextError(`line ${this.lineNo} neither ends the report nor opens its next list`);
    this.open(next[2] as ReportList);
  }

  /** The first line: the small fields and the first list's opening. */
  private head(text: string): void {
    const match = OPENING.exec(text);
    if (!match) {
      // Say what it is instead: not JSON, not an object, or JSON that is not the stored form.
      const value = parse(text, 'it');
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new ReportTextError('it is not an object');
      throw new ReportTextError('it is not a stored report (no list on its first line)');
    }
    const head = parse(`${text.slice(0, match.index)}}`, 'its first line');
    if (typeof head !== 'object' || head === null || Array.isArray(head))
      throw new ReportTextError('its first line is not an object');
    this.reader.head(head as Record<string, unknown>);
    this.open(match[2] as ReportList);
  }

  private open(list: ReportList): void {
    this.list = list;
    this.reader.open(list);
  }
}

function parse(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ReportTextError(`${where} is not JSON (${notJsonReason(error)})`);
  }
}
