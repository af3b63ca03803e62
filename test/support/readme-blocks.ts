/**
 * The runnable blocks of README.md and docs/*.md, as test/docs/commands.test.ts finds them: a fenced block
 * right after `<!-- readme-test -->` (or `<!-- readme-test background -->` for a command that keeps
 * running, such as `simulate` or `serve`), optionally followed by `<!-- readme-output -->` (or
 * `<!-- readme-output json-subset -->`) and a fenced block with what it prints.
 */

export interface ReadmeBlock {
  /** 1-based line of the block's opening fence, for messages. */
  readonly line: number;
  readonly script: string;
  readonly background: boolean;
  /**
   * `<section> / <terminal>`: the terminal a `# terminal N` first line names; a block without one
   * continues the previous terminal of its section. Every heading starts afresh.
   */
  readonly terminal: string;
  readonly expected?: { readonly text: string; readonly kind: 'lines' | 'json-subset' };
}

const DIRECTIVE = /^<!-- readme-(test|output)(?: ([\w-]+))? -->$/;

/** Every marked block of a Markdown file, in order. Throws on a directive that is not followed by a fence. */
export function readmeBlocks(readme: string, file = 'README.md'): ReadmeBlock[] {
  const lines = readme.split('\n');
  const blocks: ReadmeBlock[] = [];
  let section = '';
  let terminal = 'main';
  const fenceAfter = (i: number) => {
    if (!/^```/.test(lines[i + 1] ?? ''))
      throw new Error(`${file}:${i + 1}: a readme directive must be followed by a fenced block`);
    const end = lines.findIndex((l, j) => j > i + 1 && l === '```');
    if (end < 0) throw new Error(`${file}:${i + 2}: unclosed fenced block`);
    return { text: lines.slice(i + 2, end).join('\n'), end };
  };
  for (let i = 0; i < lines.length; i++) {
    const heading = /^#{1,4} (.+)$/.exec(lines[i] as string);
    if (heading) {
      section = heading[1] as string;
      terminal = 'main';
      continue;
    }
    const directive = DIRECTIVE.exec(lines[i] as string);
    if (!directive) continue;
    const [, what, option] = directive;
    const { text, end } = fenceAfter(i);
    if (what === 'test') {
      if (option !== undefined && option !== 'background')
        throw new Error(`${file}:${i + 1}: unknown readme-test option ${option}`);
      const named = /^# terminal (\w+)/.exec(text);
      if (named) terminal = named[1] as string;
      blocks.push({
        line: i + 2,
        script: text,
        background: option === 'background',
        terminal: `${section} / ${terminal}`,
      });
    } else {
      const previous = blocks.at(-1);
      if (!previous || previous.expected)
        throw new Error(`${file}:${i + 1}: readme-output must follow a readme-test block`);
      if (option !== undefined && option !== 'json-subset')
        throw new Error(`${file}:${i + 1}: unknown readme-output option ${option}`);
      blocks[blocks.length - 1] = {
        ...previous,
        expected: { text, kind: option === 'json-subset' ? 'json-subset' : 'lines' },
      };
    }
    i = end;
  }
  return blocks;
}

/**
 * Where `expected` (from the README) and `actual` (parsed JSON) differ, or undefined: every key of an
 * expected object is in the actual one with a matching value, an expected array's elements appear in
 * the actual array in the same order, and a string `<name>` matches any value.
 */
export function jsonSubsetMismatch(expected: unknown, actual: unknown, path = '$'): string | undefined {
  if (typeof expected === 'string' && /^<[\w-]+>$/.test(expected)) return undefined;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array`;
    let from = 0;
    for (const [k, item] of expected.entries()) {
      const at = actual.findIndex((a, j) => j >= from && jsonSubsetMismatch(item, a) === undefined);
      if (at < 0) return `${path}[${k}]: ${JSON.stringify(item)} not found (in order)`;
      from = at + 1;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: expected an object`;
    for (const [key, value] of Object.entries(expected)) {
      const problem = jsonSubsetMismatch(value, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  }
  return expected === actual
    ? undefined
    : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}
