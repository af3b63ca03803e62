import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * The relative links of Markdown files and whether they resolve: `[text](path#anchor)` and
 * `<img src="path">` outside code, to a file that exists and, for an anchor, to a heading of it
 * (GitHub's slugs). Links to other sites are not followed: the tests run offline.
 */

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors of a Markdown text's headings, with GitHub's `-1`, `-2` for repeats. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(markdown, false).split('\n')) {
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The text with fenced blocks (and inline code, unless told) blanked; lines kept, so line numbers hold. */
function withoutCode(markdown: string, inline = true): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      if (fenced) return '';
      return inline ? line.replace(/`[^`]*`/g, '``') : line;
    })
    .join('\n');
}

export interface DocLink {
  readonly line: number;
  readonly target: string;
}

/** Every relative link of a Markdown text (targets with a scheme, such as https:, are left out). */
export function relativeLinks(markdown: string): DocLink[] {
  const links: DocLink[] = [];
  for (const [i, line] of withoutCode(markdown).split('\n').entries()) {
    const targets = [
      ...[...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string),
      ...[...line.matchAll(/<(?:img|a)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string),
    ];
    for (const target of targets)
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ line: i + 1, target });
  }
  return links;
}

/** Why a link of `file` (a path under `root`) does not resolve, or undefined when it does. */
export function brokenLink(root: string, file: string, target: string): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = path ? normalize(join(dirname(join(root, file)), path)) : join(root, file);
  if (!resolved.startsWith(normalize(root))) return `${target} leaves the repository`;
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!resolved.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  return anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)
    ? undefined
    : `${target}: no heading #${anchor}`;
}
