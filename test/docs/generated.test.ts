import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../../bin/args';
import type { Command } from '../../bin/command';
import { COMMANDS } from '../../bin/commands/index';
import { OTHER_VARIABLES, renderCommandHelp, renderOverview } from '../../bin/help';
import { SECRET_SETTINGS, SETTINGS, type SettingSpec } from '../../functions/core/scan/config';
import { DeploySettingsSchema } from '../../lib/config';
import { cliReference, docFiles, optionsTable, ROOT, renderDoc } from '../../scripts/docs';
import { runCli } from '../support/cli';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const variables = [
  ...(Object.values(SETTINGS) as SettingSpec[]).map((s) => s.env),
  ...SECRET_SETTINGS.map((s) => s.env),
  ...Object.keys(OTHER_VARIABLES),
].sort();
const flagsOf = (command: Command) => Object.keys(command.options).sort();

/** The text of one generated region of a file. */
function region(file: string, name: string): string {
  const found = new RegExp(`<!-- generated:${name} -->\\n([\\s\\S]*?)\\n<!-- /generated -->`).exec(
    read(file),
  );
  if (!found) throw new Error(`${file} has no generated region ${name}`);
  return found[1] as string;
}

/** First cells of a Markdown table's body rows. */
const firstCells = (table: string) =>
  table
    .split('\n')
    .slice(2)
    .map((row) => row.split(' | ')[0]?.replace(/^\|\s*/, '') ?? '');

describe('README.md and docs/ are what npm run docs writes', () => {
  for (const file of docFiles()) {
    it(`${file} has not drifted from the code and the pinned runs (if this fails: run npm run docs)`, async () => {
      const text = read(file);
      expect(
        text === (await renderDoc(file, text)),
        `${file} differs from what \`npm run docs\` writes`,
      ).toBe(true);
    }, 120_000);
  }
});

describe('help and the CLI reference list exactly what the commands declare', () => {
  it('`sentinel --help` is one line per command, each naming a command in the table', async () => {
    const run = await runCli(['--help'], {});
    expect(run).toMatchObject({ code: 0, stdout: `${renderOverview(COMMANDS)}\n` });
    const listed = run.stdout
      .split('\n')
      .slice(run.stdout.split('\n').indexOf('commands:') + 1)
      .filter((l) => l.startsWith('  '));
    // No summary wraps onto a second line: every indented line names a command.
    expect(listed.map((l) => /^ {2}(\S+)/.exec(l)?.[1])).toEqual([...COMMANDS.map((c) => c.name), 'help']);
    for (const line of listed) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it('`sentinel <command> --help` and `sentinel help <command>` print that command’s help alone, every flag and variable in it', async () => {
    for (const command of COMMANDS) {
      const viaFlag = await runCli([command.name, '--help'], {});
      const viaHelp = await runCli(['help', command.name], {});
      expect(viaFlag, command.name).toEqual({
        code: 0,
        stdout: `${renderCommandHelp(command)}\n`,
        stderr: '',
      });
      expect(viaHelp).toEqual(viaFlag);
      const flags = [...viaFlag.stdout.matchAll(/^ {2}--([\w-]+)/gm)].map((m) => m[1] as string);
      expect(flags.sort(), command.name).toEqual(flagsOf(command));
      expect(viaFlag.stdout).toMatch(new RegExp(`^usage: sentinel ${command.name}\\b`));
      // Only this command's usage: no other command's name opens a usage line.
      expect(viaFlag.stdout.match(/^usage: /gm)).toHaveLength(1);
      for (const option of Object.values(command.options))
        if (option.setting) expect(viaFlag.stdout).toContain(`  ${SETTINGS[option.setting].env} `);
    }
  });

  it('--state of a command that does not scan says what that command keeps there, not what a scan does with it', () => {
    for (const command of COMMANDS) {
      if (command.name === 'scan' || !command.options.state) continue;
      expect(command.options.state.doc, command.name).not.toMatch(/alert on change|forces a full read/);
    }
  });

  it('every command’s help shows examples, each a command line its own parser takes', () => {
    for (const command of COMMANDS) {
      expect(command.examples.length, command.name).toBeGreaterThanOrEqual(1);
      for (const example of command.examples) {
        // What follows a shell redirection or pipe is the shell's, not the command's.
        const words = example.line.split(/ (?:>|\|) /)[0]?.split(' ') ?? [];
        expect(words.slice(0, 2), example.line).toEqual(['sentinel', command.name]);
        expect(() => parseCommandArgs(command, words.slice(2)), example.line).not.toThrow();
        expect(renderCommandHelp(command)).toContain(`\n  ${example.line}\n`);
      }
    }
  });

  it('the CLI reference holds every command with exactly its flags', () => {
    const reference = region('docs/cli.md', 'cli-reference');
    expect(reference).toBe(cliReference(COMMANDS));
    const sections = reference.split(/^### /m).slice(1);
    expect(sections.map((s) => /^`sentinel ([\w-]+)/.exec(s)?.[1])).toEqual(COMMANDS.map((c) => c.name));
    for (const [i, command] of COMMANDS.entries()) {
      const table = (sections[i] as string).split('\n').filter((l) => l.startsWith('|'));
      const flags = firstCells(table.join('\n')).map((c) => /^`--([\w-]+)/.exec(c)?.[1]);
      expect(flags.sort(), command.name).toEqual(flagsOf(command));
    }
  });

  it('the configuration table lists every variable and every context key of the stack', () => {
    const rows = region('docs/configuration.md', 'configuration')
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
    ).toEqual(Object.keys(DeploySettingsSchema.shape).sort());
  });

  it('every variable a command names is one the tables document', () => {
    for (const command of COMMANDS)
      for (const name of command.env ?? [])
        expect(variables, `${command.name} reads ${name}`).toContain(name);
  });

  it('every setting’s flag is an option of a command, bound to that setting', () => {
    for (const [name, spec] of Object.entries(SETTINGS) as Array<[string, SettingSpec]>) {
      if (!spec.flag) continue;
      const bound = COMMANDS.some((c) => c.options[spec.flag?.slice(2) as string]?.setting === name);
      expect(bound, `${spec.env} names ${spec.flag}, which no command binds to it`).toBe(true);
    }
  });

  it('the generated reference picks up a flag or a command added to a command’s declaration', () => {
    const scan = COMMANDS.find((c) => c.name === 'scan') as Command;
    const more: Command = {
      ...scan,
      options: {
        ...scan.options,
        'brand-new': { type: 'string', value: 'X', doc: 'a new flag', default: 'y' },
      },
    };
    expect(optionsTable(more)).toContain('| `--brand-new X` | a new flag (default y) |');
    const extra: Command = {
      name: 'brand-new-command',
      summary: 'does a new thing',
      options: {},
      examples: [],
    };
    expect(cliReference([...COMMANDS, extra])).toContain(
      '### `sentinel brand-new-command`\n\nDoes a new thing.',
    );
    expect(renderOverview([...COMMANDS, extra])).toMatch(/^ {2}brand-new-command {2}does a new thing$/m);
  });
});
