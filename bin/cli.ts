import { ConfigError } from '../functions/core/base/errors';
import { closest } from '../functions/core/base/suggest';
import { asksForHelp, checkVariableNames, KNOWN_VARIABLES, parseCommandArgs, shownWord } from './args';
import { type CliIo, EXIT, UsageError } from './command';
import { COMMANDS, commandNamed, commandsWithFlag } from './commands/index';
import { runOf } from './commands/runs';
import {
  renderCommandHelp,
  renderOverview,
  renderVariableHelp,
  renderVersionHelp,
  variableDoc,
} from './help';
import { interruptedStatus } from './interrupt';
import { asksForVersion, VERSION_LINE } from './version';

export { type CliIo, EXIT } from './command';

/**
 * Runs one command line: `sentinel <command> [options]`, `sentinel help [command]`,
 * `sentinel --help`, `sentinel --version`. Returns the exit status; never throws.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [word, ...rest] = argv;
  try {
    if (word === undefined) {
      io.stderr(`${renderOverview(COMMANDS)}\n`);
      return EXIT.usage;
    }
    // `sentinel --help scan`, as `git --help commit`: that command's help, as `help scan` gives it.
    if (word === '--help' || word === '-h') return help(rest, io);
    if (asksForVersion(word)) {
      if (rest.length)
        throw new UsageError(
          `${word} takes nothing after it (got ${shownWord(rest[0])}); run sentinel ${word} alone`,
        );
      return print(io, VERSION_LINE);
    }
    if (word === 'help') return help(rest, io);
    const command = commandNamed(word);
    if (!command) throw unknownCommand(word);
    if (asksForHelp(rest)) return print(io, renderCommandHelp(command));
    const args = parseCommandArgs(command, rest, commandsWithFlag);
    checkVariableNames(io.env);
    const code = await runOf(command)(args, io);
    return io.signal?.aborted ? interrupted(io.signal, io) : code;
  } catch (error) {
    // Whatever a stopped command threw on its way out (an aborted request, a closed server), the
    // signal is what happened.
    if (io.signal?.aborted) return interrupted(io.signal, io);
    return reportError(error, io);
  }
}

/** `sentinel: interrupted by SIGINT`, exit 130 (143 for SIGTERM). */
function interrupted(signal: AbortSignal, io: CliIo): number {
  const reason: unknown = signal.reason;
  io.stderr(`sentinel: ${reason instanceof Error ? reason.message : 'interrupted'}\n`);
  return interruptedStatus(signal);
}

function print(io: CliIo, text: string): number {
  io.stdout(`${text}\n`);
  return EXIT.ok;
}

/** `help`, `help <command>`, `help <VARIABLE>`. */
function help(args: readonly string[], io: CliIo): number {
  const [topic, ...extra] = args;
  if (topic === undefined || topic === '--help' || topic === '-h') return print(io, renderOverview(COMMANDS));
  if (extra.length) throw new UsageError('usage: sentinel help [command]');
  const command = commandNamed(topic);
  if (command) return print(io, renderCommandHelp(command));
  if (variableDoc(topic) !== undefined) return print(io, renderVariableHelp(topic, COMMANDS));
  // The version is a flag, not a command, but a person asks help of it as of one.
  if (asksForVersion(topic)) return print(io, renderVersionHelp());
  const near = closest(topic, [...COMMANDS.map((c) => c.name), ...KNOWN_VARIABLES]);
  throw new UsageError(
    `no command or setting ${JSON.stringify(topic)}; ${near ? `did you mean ${near}?` : 'see sentinel --help'}`,
  );
}

function unknownCommand(word: string): UsageError {
  const names = COMMANDS.map((c) => c.name);
  if (word.startsWith('-')) {
    const near = closest(word, ['--help', '--version']);
    if (near) return new UsageError(`unknown flag ${word}; did you mean ${near}?`);
    return new UsageError(
      `${word} goes after a command (sentinel <command> ${word}); the commands: ${names.join(', ')}`,
    );
  }
  const near = closest(word, [...names, 'help']);
  return new UsageError(
    `unknown command ${JSON.stringify(word)}; ${near ? `did you mean ${near}?` : `the commands: ${names.join(', ')}`}`,
  );
}

function reportError(error: unknown, io: CliIo): number {
  const message = error instanceof Error ? error.message : String(error);
  io.stderr(`sentinel: ${message.split('\n')[0]}\n`);
  if (error instanceof UsageError || error instanceof ConfigError) return EXIT.usage;
  return EXIT.failed;
}
