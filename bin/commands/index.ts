import type { Command } from '../command';
import { ack } from './ack';
import { audit } from './audit';
import { demo } from './demo';
import { link } from './link';
import { restore } from './restore';
import { scan } from './scan';
import { serve } from './serve';
import { simulate } from './simulate';
import { snooze } from './snooze';
import { state } from './state';
import { tryAlerts } from './try-alerts';

/**
 * Every command of `sentinel`, in the order help and the CLI reference list them. A new command is
 * one module beside this file exporting a {@link Command}, and one entry here.
 */
export const COMMANDS: readonly Command[] = [
  scan,
  state,
  simulate,
  demo,
  tryAlerts,
  serve,
  link,
  restore,
  audit,
  snooze,
  ack,
];

/** The command of that name. */
export const commandNamed = (name: string): Command | undefined => COMMANDS.find((c) => c.name === name);

/** The commands that have `--flag`, for "--state is a flag of scan, snooze, ack". */
export const commandsWithFlag = (flag: string): string[] =>
  COMMANDS.filter((c) => flag in c.options).map((c) => c.name);
