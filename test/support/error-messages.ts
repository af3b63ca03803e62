import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The error messages a user can meet, read from the code itself: the message of every
 * `new SomethingError(…)` in bin/, functions/ and lib/, every `sentinel: …` line the command line
 * writes itself, and the title of every error page (a refusal or outcome with a status of 400 or
 * more). The simulator is left out: its answers reach a user only through the client's messages. A message is a pattern: its fixed text, with
 * {@link WILD} where the code puts a value in.
 */

/** Stands for a value the code puts into a message. */
export const WILD = '\u0000';

export interface CodeMessage {
  /** `file:line`. */
  readonly where: string;
  readonly kind: 'error' | 'line' | 'page';
  /** The message with {@link WILD} for each value put in. */
  readonly pattern: string;
}

const DIRS = ['bin', 'functions', 'lib'];
const LEFT_OUT = /^functions\/simulator\//;

function sourceFiles(root: string, dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(root, path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** String constants of a file (`const USAGE = '…'`), so `new UsageError(USAGE)` is read too. */
type Constants = ReadonlyMap<string, ts.Expression>;

/** The message patterns an expression can produce; null when it is not made of strings alone. */
function patternsOf(node: ts.Expression, constants: Constants = new Map()): string[] | null {
  if (ts.isParenthesizedExpression(node)) return patternsOf(node.expression, constants);
  if (ts.isIdentifier(node) && constants.has(node.text))
    return patternsOf(constants.get(node.text) as ts.Expression, constants);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node)) {
    // A nested string choice (`${a ? 'x' : 'y'}`) stays a value: the rows name the message, not each variant.
    return [node.head.text + node.templateSpans.map((s) => WILD + s.literal.text).join('')];
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = patternsOf(node.left, constants) ?? [WILD];
    const right = patternsOf(node.right, constants) ?? [WILD];
    return left.flatMap((l) => right.map((r) => l + r));
  }
  if (ts.isConditionalExpression(node)) {
    const a = patternsOf(node.whenTrue, constants);
    const b = patternsOf(node.whenFalse, constants);
    return a && b ? [...a, ...b] : null;
  }
  return null;
}

const numberOf = (node: ts.Expression | undefined) =>
  node && ts.isNumericLiteral(node) ? Number(node.text) : undefined;

/** Every message of the code under `root`, and the constructions whose message is not written out there. */
export function codeMessages(root: string): { messages: CodeMessage[]; dynamic: string[] } {
  const messages: CodeMessage[] = [];
  const dynamic: string[] = [];
  for (const file of DIRS.flatMap((d) => sourceFiles(root, d)).filter((f) => !LEFT_OUT.test(f))) {
    const source = ts.createSourceFile(
      file,
      readFileSync(join(root, file), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const where = (node: ts.Node) =>
      `${relative(root, join(root, file))}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const constants = new Map<string, ts.Expression>();
    for (const statement of source.statements)
      if (ts.isVariableStatement(statement))
        for (const d of statement.declarationList.declarations)
          if (ts.isIdentifier(d.name) && d.initializer) constants.set(d.name.text, d.initializer);
    const add = (node: ts.Node, kind: CodeMessage['kind'], patterns: string[]) => {
      for (const pattern of patterns) messages.push({ where: where(node), kind, pattern });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
        const name = node.expression.text;
        const [first] = node.arguments ?? [];
        if (/.Error$/.test(name) && first) {
          const patterns = patternsOf(first, constants);
          if (patterns) add(node, 'error', patterns);
          else dynamic.push(`${where(node)}: new ${name}(${first.getText(source)})`);
        }
      }
      // The command line's own lines on stderr: `sentinel: …`.
      if (
        file.startsWith('bin/') &&
        (ts.isTemplateExpression(node) ||
          ts.isStringLiteral(node) ||
          ts.isNoSubstitutionTemplateLiteral(node))
      ) {
        const patterns = patternsOf(node);
        for (const pattern of patterns ?? [])
          if (pattern.startsWith('sentinel: ') && !ts.isTemplateSpan(node.parent))
            add(node, 'line', [pattern.slice('sentinel: '.length).replace(/\n$/, '')]);
      }
      // Error pages: refuse(kind, status, title, …) / outcome(kind, status, title, …) with status ≥ 400 …
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
        const [, status, title] = node.arguments;
        if ((numberOf(status) ?? 0) >= 400 && title) {
          const patterns = patternsOf(title);
          if (patterns?.every((p) => p !== '')) add(node, 'page', patterns);
        }
      }
      // … and { status: ≥ 400, title: '…' } objects.
      if (ts.isObjectLiteralExpression(node)) {
        const prop = (key: string) =>
          node.properties.find(
            (p): p is ts.PropertyAssignment =>
              ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === key,
          )?.initializer;
        const status = numberOf(prop('status'));
        const title = prop('title');
        if (status !== undefined && status >= 400 && title) {
          const patterns = patternsOf(title);
          if (patterns?.every((p) => p !== '')) add(node, 'page', patterns);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { messages, dynamic };
}

/** The longest stretch of fixed text in a pattern. */
const longestText = (pattern: string) => Math.max(0, ...pattern.split(WILD).map((s) => s.length));

/**
 * Whether the row quotes the code's message: some message the row describes is part of some
 * message the code can give (a wildcard on either side stands for any text), and in that reading at
 * least `need` characters in a row of the row's fixed text are the code's own fixed text, so a row
 * that only fits into a value the code puts in does not count.
 */
export function quotesMessage(row: string, code: string, need = Math.min(12, longestText(code))): boolean {
  const n = code.length;
  // For each place in the code: -1 unreachable, else how many fixed characters matched in a row so far (need: done).
  let at: Int16Array = new Int16Array(n + 1).fill(0); // a row may quote any part: start anywhere
  const step = (v: number) => (v >= need ? need : 0);
  const close = (set: Int16Array): Int16Array => {
    for (let p = 0; p < n; p++) {
      const v = set[p] as number;
      if (v >= 0 && code[p] === WILD) set[p + 1] = Math.max(set[p + 1] as number, step(v));
    }
    return set;
  };
  at = close(at);
  for (const ch of row) {
    const next = new Int16Array(n + 1).fill(-1);
    if (ch === WILD) {
      let best = -1;
      for (let p = 0; p <= n; p++) {
        if ((at[p] as number) >= 0) best = Math.max(best, step(at[p] as number));
        next[p] = best;
      }
    } else {
      for (let p = 0; p < n; p++) {
        const v = at[p] as number;
        if (v < 0) continue;
        if (code[p] === ch) next[p + 1] = Math.max(next[p + 1] as number, v >= need ? need : v + 1);
        if (code[p] === WILD) next[p] = Math.max(next[p] as number, step(v)); // the code's value holds it
      }
    }
    at = close(next);
    if (!at.some((v) => v >= 0)) return false;
  }
  return at.some((v) => v >= need);
}
