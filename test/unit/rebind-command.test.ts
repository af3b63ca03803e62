import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { stateCommand } from '../../functions/use-cases/state-store';

/** The words a POSIX shell reads from `line`, one per line (printf prints each argument it gets). */
const shellWords = (line: string): string[] =>
  execFileSync('sh', ['-c', `printf '%s\\n' ${line.slice('sentinel '.length)}`], { encoding: 'utf8' })
    .split('\n')
    .slice(0, -1);

describe('the refusal’s sentinel state rebind command', () => {
  it('names the state, the account and its accounts file, and the base URL, as words a shell reads back exactly', () => {
    const state = "/home/o'brien/my state.json";
    const file = '/home/ops/accounts $(touch x).json';
    const line = stateCommand('rebind', {
      state,
      account: { name: 'brand-a', accountsFile: file },
      baseUrl: 'https://api.reseller.example',
    });
    expect(shellWords(line)).toEqual([
      'state',
      'rebind',
      state,
      '--account',
      'brand-a',
      '--accounts',
      file,
      '--base-url',
      'https://api.reseller.example',
      '--yes',
    ]);
  });

  it('leaves plain words bare, and names only the state for one account of RESELLER_API_KEY', () => {
    expect(stateCommand('rebind', { state: 'dynamodb:sentinel-state' })).toBe(
      'sentinel state rebind dynamodb:sentinel-state --yes',
    );
    expect(
      stateCommand('rebind', {
        state: '.sentinel/state.json',
        account: { name: 'a', accountsFile: 'x.json' },
      }),
    ).toBe('sentinel state rebind .sentinel/state.json --account a --accounts x.json --yes');
  });

  it('never lets a path be read as an option: a path starting with - is given as ./-…', () => {
    const line = stateCommand('rebind', {
      state: '-state.json',
      account: { name: 'a', accountsFile: '--accounts.json' },
    });
    expect(shellWords(line)).toEqual([
      'state',
      'rebind',
      './-state.json',
      '--account',
      'a',
      '--accounts',
      './--accounts.json',
      '--yes',
    ]);
  });
});
