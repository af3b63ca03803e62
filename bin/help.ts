import { REPORT_ENV } from '../functions/core/memory/report-store';
import { SECRET_SETTINGS, SETTINGS, type SettingSpec } from '../functions/core/scan/config';
import { type Command, defaultOf } from './command';
import { VERSION_LINE } from './version';

/**
 * What `sentinel --help`, `sentinel help <command>` and `sentinel <command> --help` print, from the
 * commands' own declarations and the settings table.
 */

/** Variables the command line reads that are not settings of a scan. */
export const OTHER_VARIABLES: Readonly<Record<string, string>> = {
  [REPORT_ENV.dir]:
    'folder the command line keeps the latest report in, for the report page and calendar feed (default: beside a state file, else .sentinel/reports)',
  [REPORT_ENV.bucket]: 'S3 bucket the latest report is kept in instead (the stack sets it for its functions)',
};

/** `sentinel help version`: the version is a flag before any command, not a command. */
export const renderVersionHelp = (): string =>
  `usage: sentinel --version (or -v, -V, version), alone, before any command\n\nprints ${VERSION_LINE}`;

/** One line about a variable, from the table that defines it. */
export function variableDoc(name: string): string | undefined {
  const setting = (Object.values(SETTINGS) as SettingSpec[]).find((s) => s.env === name);
  if (setting) return `${setting.doc}${setting.default !== undefined ? ` (default ${setting.default})` : ''}`;
  const secret = SECRET_SETTINGS.find((s) => s.env === name);
  return secret?.doc ?? OTHER_VARIABLES[name];
}

/** The variables a command reads: its flags' own, then the others it names. */
export function variablesOf(command: Command): string[] {
  const bound = Object.values(command.options).flatMap((o) => (o.setting ? [SETTINGS[o.setting].env] : []));
  return [...new Set([...bound, ...(command.env ?? [])])];
}

/** `--flag VALUE`, as help and the reference show it. */
export const flagUsage = (flag: string, command: Command): string => {
  const option = command.options[flag];
  return `--${flag}${option?.value ? ` ${option.value}` : ''}`;
};

/** What the option does, with its default and variable: `… (default 30; EXPIRY_DAYS)`. */
export function optionDoc(flag: string, command: Command): string {
  const option = command.options[flag];
  if (!option) return '';
  const d = defaultOf(option);
  const variable = option.setting ? SETTINGS[option.setting].env : undefined;
  const notes = [d !== undefined ? `default ${d}` : undefined, variable].filter(Boolean);
  return `${option.doc}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

/** Exit statuses a command can end with. */
export function exitStatusOf(command: Command): string {
  return (
    'exit status: 0 completed, 1 could not complete (one line on stderr says why), 2 bad usage or configuration' +
    ('fail-on' in command.options ? ', 3 --fail-on level reached' : '') +
    '; 130 stopped by Ctrl-C, 143 by SIGTERM, 141 by SIGPIPE (its reader went away: | head)'
  );
}

const WIDTH = 100;

/** `name  text`, with `text` wrapped under itself at {@link WIDTH} columns. */
function entry(indent: number, name: string, column: number, text: string): string[] {
  const head = `${' '.repeat(indent)}${name}`;
  const pad = Math.max(column, head.length + 2);
  const words = text.split(' ');
  const lines: string[] = [];
  let line = head.padEnd(pad);
  let empty = true;
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = ' '.repeat(pad);
      empty = true;
    }
    line += `${empty ? '' : ' '}${word}`;
    empty = false;
  }
  lines.push(line);
  return lines.map((l) => l.trimEnd());
}

/** `sentinel --help`: one line per command. */
export function renderOverview(commands: readonly Command[]): string {
  const column = Math.max(...commands.map((c) => c.name.length)) + 4;
  return [
    'usage: sentinel <command> [options]',
    '',
    'commands:',
    ...commands.flatMap((c) => entry(2, c.name, column, c.summary)),
    ...entry(2, 'help', column, 'this overview; help <command> shows a command’s options'),
    '',
    'sentinel <command> --help (or sentinel help <command>): its usage, options, environment and exit status',
    'sentinel --version (or -v): the version',
  ].join('\n');
}

/** `sentinel <command> --help`: usage, what it does, examples, every option with its default and variable, the environment. */
export function renderCommandHelp(command: Command): string {
  const flags = Object.keys(command.options);
  const column = Math.max(16, ...flags.map((f) => flagUsage(f, command).length + 4));
  const variables = variablesOf(command);
  const varColumn = Math.max(...variables.map((v) => v.length + 4), 0);
  return [
    `usage: sentinel ${command.name}${command.args ? ` ${command.args}` : ''}${flags.length ? ' [options]' : ''}`,
    '',
    ...entry(
      0,
      '',
      0,
      `${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.${command.about ? ` ${command.about}` : ''}`,
    ),
    '',
    'examples:',
    ...command.examples.flatMap((e) => [`  ${e.line}`, ...entry(4, '', 6, e.says)]),
    '',
    'options:',
    ...flags.flatMap((f) => entry(2, flagUsage(f, command), column, optionDoc(f, command))),
    ...entry(2, '-h, --help', column, 'this help'),
    ...(variables.length
      ? [
          '',
          'environment (a flag overrides its variable):',
          ...variables.flatMap((v) => entry(2, v, varColumn, variableDoc(v) ?? '')),
        ]
      : []),
    '',
    exitStatusOf(command),
  ].join('\n');
}

/** `sentinel help VARIABLE`: the variable, and which commands read it. */
export function renderVariableHelp(name: string, commands: readonly Command[]): string {
  const readers = commands.filter((c) => variablesOf(c).includes(name)).map((c) => c.name);
  return [
    ...entry(0, name, name.length + 2, variableDoc(name) ?? ''),
    `read by: ${readers.length ? readers.join(', ') : 'the deployed functions only'}`,
  ].join('\n');
}
