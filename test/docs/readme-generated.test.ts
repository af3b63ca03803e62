import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS, type CommandSpec, renderHelp } from '../../bin/commands';
import { SECRET_SETTINGS, SETTINGS, type SettingSpec } from '../../functions/core/config';
import { StackConfigSchema } from '../../lib/config';
import { commandsTable, optionsTable, README_PATH, renderReadme } from '../../scripts/readme';
import { runCli } from '../support/cli';

const readme = readFileSync(README_PATH, 'utf8');
const variables = [...(Object.values(SETTINGS) as SettingSpec[]), ...SECRET_SETTINGS]
  .map((s) => s.env)
  .sort();
const flagsOf = (spec: CommandSpec) => Object.keys(spec.options).sort();

/** The text of one generated region of the README. */
function region(name: string): string {
  const found = new RegExp(`<!-- generated:${name} -->\\n([\\s\\S]*?)\\n<!-- /generated -->`).exec(readme);
  if (!found) throw new Error(`README.md has no generated region ${name}`);
  return found[1] as string;
}

/** First cells of a Markdown table's body rows. */
const firstCells = (table: string) =>
  table
    .split('\n')
    .slice(2)
    .map((row) => row.split(' | ')[0]?.replace(/^\|\s*/, '') ?? '');

describe('README.md is what npm run docs writes', () => {
  it('has not drifted from the code and the pinned runs (if this fails: run npm run docs)', async () => {
    const generated = await renderReadme(readme);
    expect(readme === generated, 'README.md differs from what `npm run docs` writes: run npm run docs').toBe(
      true,
    );
  }, 60_000);
});

describe('help and the README list exactly what the code defines', () => {
  it('help is the rendered table, with every command, flag and variable', async () => {
    const run = await runCli(['help'], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${renderHelp()}\n`);

    const commands = new Map<string, string[]>();
    let current: string[] | undefined;
    const env: string[] = [];
    let inEnvironment = false;
    for (const line of run.stdout.split('\n')) {
      if (line.startsWith('environment')) inEnvironment = true;
      const command = /^ {2}([a-z][\w-]*)(?: <[^>]+>)*$/.exec(line);
      const flag = /^ {6}--([\w-]+)/.exec(line);
      const variable = /^ {2}([A-Z][A-Z0-9_]+) {2}/.exec(line);
      if (!inEnvironment && command) {
        current = [];
        commands.set(command[1] as string, current);
      } else if (!inEnvironment && flag) current?.push(flag[1] as string);
      else if (inEnvironment && variable) env.push(variable[1] as string);
    }
    expect([...commands.keys()]).toEqual(COMMANDS.map((c) => c.name));
    for (const spec of COMMANDS) expect(commands.get(spec.name)?.sort(), spec.name).toEqual(flagsOf(spec));
    expect(env.sort()).toEqual(variables);
  });

  it('the scan table lists exactly scan’s flags', () => {
    const scan = COMMANDS.find((c) => c.name === 'scan') as CommandSpec;
    const flags = firstCells(region('scan-options')).map((c) => /^`--([\w-]+)/.exec(c)?.[1]);
    expect(flags.sort()).toEqual(flagsOf(scan));
  });

  it('the commands table lists every other command with exactly its flags', () => {
    const listed = new Map<string, string[]>();
    let current: string[] = [];
    for (const cell of firstCells(region('commands'))) {
      const command = /^`sentinel ([\w-]+)/.exec(cell);
      const flag = /^\s*`--([\w-]+)/.exec(cell);
      if (command) {
        current = [];
        listed.set(command[1] as string, current);
      } else if (flag) current.push(flag[1] as string);
      else throw new Error(`unexpected row in the commands table: ${cell}`);
    }
    const others = COMMANDS.filter((c) => c.name !== 'scan');
    expect([...listed.keys()]).toEqual(others.map((c) => c.name));
    for (const spec of others) expect(listed.get(spec.name)?.sort(), spec.name).toEqual(flagsOf(spec));
  });

  it('the Configuration table lists every variable and every context key of the stack', () => {
    const rows = region('configuration')
      .split('\n')
      .slice(2)
      .map((row) => row.split(' | ').map((c) => c.replace(/^\|\s*|`/g, '').trim()));
    expect(
      rows
        .map((r) => r[0])
        .filter(Boolean)
        .sort(),
    ).toEqual(variables);
    expect(
      rows
        .map((r) => r[1])
        .filter(Boolean)
        .sort(),
    ).toEqual(Object.keys(StackConfigSchema.shape).sort());
  });

  it('every setting’s flag is an option of a command, bound to that setting', () => {
    for (const [name, spec] of Object.entries(SETTINGS) as Array<[string, SettingSpec]>) {
      if (!spec.flag) continue;
      const bound = COMMANDS.some((c) => c.options[spec.flag?.slice(2) as string]?.setting === name);
      expect(bound, `${spec.env} names ${spec.flag}, which no command binds to it`).toBe(true);
    }
  });

  it('the parser knows every command of the table and refuses a flag the table does not have', async () => {
    for (const spec of COMMANDS.filter((c) => c.name !== 'help')) {
      const run = await runCli([spec.name, '--not-a-flag-of-any-command'], {});
      expect(run.code, spec.name).toBe(2);
      expect(run.stderr, spec.name).toMatch(/Unknown option '--not-a-flag-of-any-command'/);
    }
  });

  it('the generated tables pick up a flag or a command added to bin/commands.ts', () => {
    const scan = COMMANDS.find((c) => c.name === 'scan') as CommandSpec;
    const more: CommandSpec = {
      ...scan,
      options: {
        ...scan.options,
        'brand-new': { type: 'string', value: 'X', doc: 'a new flag', default: 'y' },
      },
    };
    expect(optionsTable(more)).toContain('| `--brand-new X` | a new flag |  | y |');
    const extra: CommandSpec = { name: 'brand-new-command', summary: 'does a new thing', options: {} };
    expect(commandsTable([...COMMANDS, extra])).toContain(
      '| `sentinel brand-new-command` | does a new thing |',
    );
  });
});
