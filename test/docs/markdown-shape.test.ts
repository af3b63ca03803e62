import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, ROOT } from '../../scripts/docs';

/**
 * Lines of `text`, outside code fences, that start with one space and then text: no list item's
 * continuation (two spaces) and no paragraph, so an edit that put a sentence there glued it to the
 * line before (a list's lead-in read "…key and state: The web function's role …").
 */
function strayIndents(text: string): number[] {
  let fenced = false;
  const stray: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^ [^ ]/.test(line)) stray.push(i + 1);
  });
  return stray;
}

describe('README.md and docs/ have no line indented by one space outside code', () => {
  for (const file of docFiles())
    it(file, () => {
      expect(strayIndents(readFileSync(join(ROOT, file), 'utf8')).map((n) => `${file}:${n}`)).toEqual([]);
    });

  it('finds such a line, and leaves code and list continuations alone (the checker itself)', () => {
    expect(strayIndents('Lead-in:\n The web\n- item\n  continued\n```\n code\n```\n')).toEqual([2]);
  });
});
