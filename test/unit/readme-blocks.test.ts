import { describe, expect, it } from 'vitest';
import { mask } from '../../scripts/docs';
import { jsonSubsetMismatch, readmeBlocks } from '../support/readme-blocks';

const README = [
  '## One',
  '<!-- readme-test background -->',
  '```sh',
  '# terminal 1',
  'npm run -s sentinel -- simulate --port 8080',
  '```',
  '<!-- readme-output -->',
  '```',
  'listening',
  '```',
  '<!-- readme-test -->',
  '```sh',
  '# terminal 2',
  'export A=1',
  '```',
  '<!-- readme-test -->',
  '```sh',
  'echo "$A"',
  '```',
  '```sh',
  'not marked',
  '```',
  '## Two',
  '<!-- readme-test -->',
  '```sh',
  'echo two',
  '```',
  '<!-- readme-output json-subset -->',
  '```',
  '{}',
  '```',
].join('\n');

describe('readmeBlocks', () => {
  it('finds the marked blocks with their terminal, background flag and shown output', () => {
    expect(readmeBlocks(README)).toEqual([
      {
        line: 3,
        script: '# terminal 1\nnpm run -s sentinel -- simulate --port 8080',
        background: true,
        terminal: 'One / 1',
        expected: { text: 'listening', kind: 'lines' },
      },
      { line: 12, script: '# terminal 2\nexport A=1', background: false, terminal: 'One / 2' },
      { line: 17, script: 'echo "$A"', background: false, terminal: 'One / 2' },
      {
        line: 25,
        script: 'echo two',
        background: false,
        terminal: 'Two / main',
        expected: { text: '{}', kind: 'json-subset' },
      },
    ]);
  });

  it('refuses a directive without a block, an output without a command and an unknown option', () => {
    expect(() => readmeBlocks('<!-- readme-test -->\ntext')).toThrow(/must be followed by a fenced block/);
    expect(() => readmeBlocks('<!-- readme-output -->\n```\nx\n```')).toThrow(/must follow a readme-test/);
    expect(() => readmeBlocks('<!-- readme-test sometimes -->\n```\nx\n```')).toThrow(/unknown readme-test/);
  });
});

describe('jsonSubsetMismatch', () => {
  const actual = { a: 1, list: [{ k: 'x' }, { k: 'y' }, { k: 'z' }], s: 'text', n: 5 };

  it('accepts the same keys and values, array elements in order, and <name> for any value', () => {
    expect(jsonSubsetMismatch({ a: 1, list: [{ k: 'x' }, { k: 'z' }], n: '<ms>' }, actual)).toBeUndefined();
  });

  it('names the first difference', () => {
    expect(jsonSubsetMismatch({ a: 2 }, actual)).toBe('$.a: expected 2, got 1');
    expect(jsonSubsetMismatch({ missing: true }, actual)).toBe('$.missing: expected true, got undefined');
    expect(jsonSubsetMismatch({ list: [{ k: 'z' }, { k: 'x' }] }, actual)).toMatch(
      /^\$\.list\[1\]: .* not found/,
    );
    expect(jsonSubsetMismatch({ s: {} }, actual)).toBe('$.s: expected an object');
  });
});

describe('mask', () => {
  it('replaces ports, timings, message ids and link signatures by placeholders', () => {
    expect(
      mask(
        'on http://127.0.0.1:40123 (2 requests, 0.1 s, full mode)\npublished alert 5f1c-aa to arn\n?exp=1795932000&kid=9c68c1b1&sig=Ab-c_d',
      ),
    ).toBe(
      'on http://127.0.0.1:<port> (2 requests, <seconds> s, full mode)\npublished alert <message-id> to arn\n?exp=<exp>&kid=<kid>&sig=<sig>',
    );
  });
});
