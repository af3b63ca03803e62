import type { CliIo, Command, ParsedArgs } from '../command';

/** Runs a command with its parsed arguments; returns the exit status. */
export type Run = (args: ParsedArgs, io: CliIo) => Promise<number>;

/**
 * What each command does, by its name: the module beside this file, imported only when the command
 * runs, so help never loads it. Kept apart from the declarations (index.ts) because each module
 * reads its own declaration's flags: a declaration that imported its module would make the two
 * import each other.
 */
const RUNS: Readonly<Record<string, Run>> = {
  // One account, or with --accounts every account of an accounts file (docs/accounts.md).
  scan: async (args, io) =>
    args.values.accounts !== undefined
      ? (await import('./scan-accounts')).scanAccounts(args, io)
      : (await import('./scan')).runScan(args, io),
  state: async (args, io) => (await import('./state')).runState(args, io),
  simulate: async (args, io) => (await import('./simulate')).runSimulator(args, io),
  demo: async (args, io) => (await import('./demo')).runDemo(args, io),
  'try-alerts': async (args, io) => (await import('./try-alerts')).runTryAlerts(args, io),
  serve: async (args, io) => (await import('./serve')).runServe(args, io),
  link: async (args, io) => (await import('./link')).runLink(args, io),
  restore: async (args, io) => (await import('./restore')).runRestore(args, io),
  audit: async (args, io) => (await import('./audit')).runAudit(args, io),
  snooze: async (args, io) => (await import('./snooze')).runSnooze(args, io),
  ack: async (args, io) => (await import('./snooze')).runAck(args, io),
};

/** What runs `command`; a declared command without one is a mistake of this file, said so. */
export function runOf(command: Command): Run {
  const run = RUNS[command.name];
  if (!run) throw new Error(`bin/commands/runs.ts has no run for the command ${command.name}`);
  return run;
}
