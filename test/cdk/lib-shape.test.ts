import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy-docs';

/**
 * lib/ stays readable (issue 35): no file over 600 lines, no construct's constructor over 150, no
 * other function over 80. A construct that grows past these splits into constructs and helpers.
 */
const LIMITS = { file: 600, constructor: 150, function: 80 } as const;
const LIB = join(ROOT, 'lib');

interface Oversized {
  readonly where: string;
  readonly lines: number;
  readonly limit: number;
}

/** The functions of a source file longer than their limit: constructors, methods, arrows, declarations. */
function oversized(file: string, text: string): Oversized[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Oversized[] = [];
  const lines = text.split('\n').length;
  if (lines > LIMITS.file) out.push({ where: file, lines, limit: LIMITS.file });
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const limit = ts.isConstructorDeclaration(node) ? LIMITS.constructor : LIMITS.function;
      if (end - start + 1 > limit)
        out.push({
          where: `${file}:${start + 1} ${ts.SyntaxKind[node.kind]}`,
          lines: end - start + 1,
          limit,
        });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('lib/ stays within its sizes', () => {
  it(`has no file over ${LIMITS.file} lines, no constructor over ${LIMITS.constructor}, no function over ${LIMITS.function}`, () => {
    const files = readdirSync(LIB).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((f) => oversized(`lib/${f}`, readFileSync(join(LIB, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds a function that is too long (the check really measures)', () => {
    const body = Array.from({ length: 81 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(oversized('long.ts', `export function long() {\n${body}\n}\n`)).toEqual([
      { where: 'long.ts:1 FunctionDeclaration', lines: 83, limit: 80 },
    ]);
    const ctor = Array.from({ length: 149 }, (_, i) => `    this.x${i} = ${i};`).join('\n');
    expect(oversized('ctor.ts', `class A {\n  constructor() {\n${ctor}\n  }\n}\n`)).toEqual([
      { where: 'ctor.ts:2 Constructor', lines: 151, limit: 150 },
    ]);
  });
});
