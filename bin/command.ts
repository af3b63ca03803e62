import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import { SentinelError } from '../functions/core/base/errors';
import { SETTINGS, type SettingName, type SettingSpec } from '../functions/core/scan/config';

/**
 * What a command of the command line is made of. Each command is one declaration in bin/commands/ that
 * is one {@link Command}: its name, its flags, the environment it reads and its examples. The
 * parser (bin/args.ts), its help (bin/help.ts) and the CLI reference in docs/ (scripts/docs.ts)
 * all read that one declaration, so a flag cannot exist in one and not the others. A new flag is
 * one entry in its command's `options` (bin/commands/index.ts); a new command is one declaration
 * there, the module beside it that runs it, and its line in bin/commands/runs.ts.
 */

/** Where the CLI writes and what it reads; tests pass their own. */
export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /**
   * Writes to stdout as `stdout` does, and resolves only once the text was handed to the OS; rejects
   * when it could not be (the reader went away: EPIPE). For output that must not count as delivered
   * before it is (`scan --alert-to stdout`, after which the state is saved).
   * @default `stdout`, counted as delivered once called
   */
  readonly stdoutDelivered?: (text: string) => Promise<void>;
  /** The directory relative defaults (`.sentinel/`) are under. @default process.cwd() */
  readonly cwd?: string;
  /** True when a person watches the output (stdout is a terminal): `demo` then keeps its links served. */
  readonly interactive?: boolean;
  /**
   * Aborted, with an InterruptedError (bin/interrupt.ts) as its reason, when the process must stop (the first
   * SIGINT or SIGTERM): requests in flight end, nothing more is published or saved, servers close.
   * Long-running commands run until it aborts.
   */
  readonly signal?: AbortSignal;
  /** Called with the address of a server once it listens (simulate, serve, an interactive demo). */
  readonly onListening?: (url: string) => void;
  /** The SNS client to publish with. @default a client configured by the AWS SDK's environment */
  readonly sns?: () => SNSClient;
  /** The DynamoDB client for `--state dynamodb:TABLE`. @default configured from `env` */
  readonly dynamodb?: () => DynamoDBClient;
  /**
   * Asks the person at the terminal; absent when stdin is not a terminal. Undefined when the input
   * ended (Ctrl-D) before an answer.
   */
  readonly ask?: (question: string) => Promise<string | undefined>;
}

/**
 * Exit statuses: 0 completed, 1 could not complete, 2 bad usage or configuration, 3 --fail-on
 * reached; a signal stops a command with 130 or 143 (bin/interrupt.ts).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, failOn: 3 } as const;

/** The command line was used wrongly: an unknown command or flag, a missing argument, a bad value. */
export class UsageError extends SentinelError {
  override readonly name: string = 'UsageError';
}

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** Placeholder of the value in help, e.g. `N`, `ISO`. */
  readonly value?: string;
  readonly doc: string;
  /** The setting this flag overrides: its variable and default come from there. */
  readonly setting?: SettingName;
  /** Shown in help when the option has no setting. */
  readonly default?: string;
  /** Its value is a secret (a URL with a token in it): no message repeats it. */
  readonly secret?: true;
}

/** One line of a command's examples: a command line and what it does. */
export interface Example {
  /** The whole command line, from `sentinel`. */
  readonly line: string;
  readonly says: string;
}

/** A command's flags and positionals after parsing. */
export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

export interface Command {
  readonly name: string;
  /** Positional arguments in help, e.g. `<domain>`. */
  readonly args?: string;
  /** One line for `sentinel --help`. */
  readonly summary: string;
  /** What else its help and the CLI reference say, in a sentence or two. */
  readonly about?: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Environment variables it reads besides its flags' own (names from SETTINGS, SECRET_SETTINGS or bin/help.ts). */
  readonly env?: readonly string[];
  /** Command lines its help shows, each parsed by a test against these options. */
  readonly examples: readonly Example[];
}

/** An option bound to a setting: the doc and default are the setting's own. */
export const fromSetting = (name: SettingName, value: string): OptionSpec => {
  const spec: SettingSpec = SETTINGS[name];
  return { type: 'string', value, doc: spec.doc, setting: name };
};

/** A flag without a value bound to an on/off setting: given, the setting is on. */
export const switchFromSetting = (name: SettingName): OptionSpec => ({
  type: 'boolean',
  doc: SETTINGS[name].doc,
  setting: name,
});

/** `--port N` of a command that listens. */
export const portOption = (fallback: string): OptionSpec => ({
  type: 'string',
  value: 'N',
  doc: 'TCP port on 127.0.0.1; 0 picks a free one',
  default: fallback,
});

/** `--state`, for every command that reads or writes the state store. */
export const STATE_OPTION = fromSetting('state', 'PATH|dynamodb:TABLE');
/** `--base-url`, for every command that talks to the reseller API. */
export const BASE_URL_OPTION = fromSetting('resellerBaseUrl', 'URL');

/** What an option's default is, in words. */
export function defaultOf(option: OptionSpec): string | undefined {
  if (option.setting) {
    const d = (SETTINGS[option.setting] as SettingSpec).default;
    return d === undefined ? undefined : String(d);
  }
  return option.default;
}
