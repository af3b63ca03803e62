import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root, where README.md, docs/ and cdk.json are. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** The documents whose deploy commands the tests run as `cdk synth`. */
export const DEPLOY_DOCS = ['README.md', 'docs/deploy.md'] as const;

export interface DeployCommand {
  /** `file:line` of the command, for messages. */
  readonly where: string;
  /** The words after `npx cdk deploy`, as the shell would pass them. */
  readonly args: readonly string[];
}

/**
 * Every `npx cdk deploy …` command in a document's shell blocks, with its continuation lines joined
 * and its words split as bash splits them (single and double quotes, backslash-newline). A command
 * that uses shell syntax this cannot read ($, backticks, globs) is refused rather than misread.
 */
export function deployCommands(file: string): DeployCommand[] {
  const path = join(ROOT, file);
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n');
  const commands: DeployCommand[] = [];
  let fence: 'shell' | 'other' | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^```/.test(line)) {
      fence = fence ? undefined : /^```(sh|bash|shell)?\s*$/.test(line) ? 'shell' : 'other';
      continue;
    }
    const inShell = fence === 'shell';
    if (!inShell || !/^npx cdk deploy(\s|$)/.test(line)) continue;
    let text = line;
    const start = i;
    while (text.endsWith('\\')) text = `${text.slice(0, -1)} ${lines[++i] ?? ''}`;
    const words = shellWords(text, `${file}:${start + 1}`);
    commands.push({ where: `${file}:${start + 1}`, args: words.slice(3) });
  }
  return commands;
}

function shellWords(text: string, where: string): string[] {
  if (/[$`*?;&|<>]/.test(text.replace(/'[^']*'/g, '')))
    throw new Error(`${where}: the deploy command uses shell syntax the test cannot run as written`);
  const words: string[] = [];
  for (const m of text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
  return words;
}

/**
 * Files a document shows in full: a fenced block right after `<!-- file: NAME -->`. The deploy
 * tests write them where the document's commands expect them.
 */
export function documentedFiles(file: string): Map<string, string> {
  const path = join(ROOT, file);
  const files = new Map<string, string>();
  if (!existsSync(path)) return files;
  const lines = readFileSync(path, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const name = /^<!-- file: ([\w.-]+) -->$/.exec(lines[i] as string)?.[1];
    if (!name) continue;
    if (!/^```/.test(lines[i + 1] ?? '')) throw new Error(`${file}:${i + 1}: a file must be a fenced block`);
    const end = lines.findIndex((l, j) => j > i + 1 && l === '```');
    files.set(name, lines.slice(i + 2, end).join('\n'));
  }
  return files;
}

/** The fenced blocks of one language in a document (```ts …```), in order. */
export function codeBlocks(file: string, language: string): string[] {
  const path = join(ROOT, file);
  if (!existsSync(path)) return [];
  return [
    ...readFileSync(path, 'utf8').matchAll(new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)^\`\`\`$`, 'gm')),
  ].map((m) => m[1] as string);
}
