import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, ROOT } from '../../scripts/docs';
import { anchorsOf, brokenLink, relativeLinks, slug } from '../support/doc-links';

describe('every relative link in README.md and docs/ resolves', () => {
  for (const file of docFiles()) {
    it(file, () => {
      const broken = relativeLinks(readFileSync(join(ROOT, file), 'utf8'))
        .map((link) => ({ ...link, problem: brokenLink(ROOT, file, link.target) }))
        .filter((link) => link.problem)
        .map((link) => `${file}:${link.line}: ${link.problem}`);
      expect(broken).toEqual([]);
    });
  }

  it('finds links to files and headings, and catches a broken one (the checker itself)', () => {
    const root = mkdtempSync(join(tmpdir(), 'doc-links-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs', 'a.md'), '# Deploying with `cdk deploy`\n\n## Two scans, at once\n');
      const readme = [
        '[ok](docs/a.md) [ok](docs/a.md#deploying-with-cdk-deploy) [ok](docs/a.md#two-scans-at-once)',
        '[gone](docs/b.md) [no heading](docs/a.md#nowhere) [web](https://example.com/x.md)',
        '<img src="docs/none.png" alt="x">',
        '```',
        '[in code](docs/c.md)',
        '```',
      ].join('\n');
      writeFileSync(join(root, 'README.md'), readme);
      const problems = relativeLinks(readme).map((l) => brokenLink(root, 'README.md', l.target));
      expect(problems).toEqual([
        undefined,
        undefined,
        undefined,
        'docs/b.md: no such file',
        'docs/a.md#nowhere: no heading #nowhere',
        'docs/none.png: no such file',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('makes GitHub’s anchors', () => {
    expect(slug('Snooze, acknowledge, the report page and the calendar feed')).toBe(
      'snooze-acknowledge-the-report-page-and-the-calendar-feed',
    );
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
  });
});

describe('README.md is a front page', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('fits in 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('opens with the two commands, and names the API it speaks with a link to its documentation', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock.split('\n').map((l) => l.replace(/\s+#.*$/, ''))).toEqual([
      'npm ci && npm start',
      'npm test',
      '',
    ]);
    expect(readme).toContain('## The API it speaks');
    expect(readme).toContain('](docs/reseller-api.md)');
    expect(readFileSync(join(ROOT, 'docs', 'reseller-api.md'), 'utf8')).toMatch(/^# Domain Reseller API/);
  });

  it('shows a real sample digest and the report page’s screenshot', () => {
    const digest = /<!-- generated:demo -->\n([\s\S]*?)<!-- \/generated -->/.exec(readme)?.[1] ?? '';
    expect(digest).toMatch(/^CRITICAL \(\d+\)$/m);
    expect(digest).toContain('--- SMS (critical only, as a phone receives it) ---');
    expect(readme).toMatch(/<img src="docs\/images\/report-page\.png"/);
  });
});
