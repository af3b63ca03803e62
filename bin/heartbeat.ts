import { ENV } from '../functions/core/scan/config';
import {
  checkHeartbeatUrl,
  type Heartbeat,
  heartbeatFailureLine,
  heartbeatOf,
  type ScanOutcome,
} from '../functions/use-cases/heartbeat';
import { str } from './args';
import type { CliIo, ParsedArgs } from './command';

/** The command line's heartbeat: pings around one scan, each failure said on stderr. */
export interface CliHeartbeat {
  /**
   * Runs `scan`, then pings: `complete` when it returned, `failed` when it threw (the error is
   * thrown on as it was: a ping never changes the exit status nor hides the scan's message). A
   * scan a signal stopped pings nothing: stopped is not failed (a person or a supervisor ended it),
   * and nothing new starts once the command is stopping.
   */
  around<T>(io: Pick<CliIo, 'stderr' | 'signal'>, scan: () => Promise<T>): Promise<T>;
}

/** Pings one heartbeat, saying a failure on stderr. */
export async function pingSaying(
  heartbeat: Heartbeat,
  outcome: ScanOutcome,
  io: Pick<CliIo, 'stderr'>,
): Promise<void> {
  const result = await heartbeat.ping(outcome);
  if (!result.ok) io.stderr(`sentinel: ${heartbeatFailureLine(heartbeat, outcome, result.reason)}\n`);
}

/** The heartbeat URL of `--heartbeat-url` or HEARTBEAT_URL, checked; undefined when neither is set. */
export function heartbeatUrlOf(args: ParsedArgs, env: NodeJS.ProcessEnv): URL | undefined {
  const flag = str(args.values['heartbeat-url']);
  const text = flag ?? (env[ENV.heartbeatUrl]?.trim() || undefined);
  if (text === undefined) return undefined;
  return checkHeartbeatUrl(text, flag !== undefined ? '--heartbeat-url' : ENV.heartbeatUrl);
}

/** The heartbeat of one scan (of one account of several: its own check, URL/<account>). */
export function cliHeartbeat(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  account?: string,
): CliHeartbeat | undefined {
  const base = heartbeatUrlOf(args, env);
  if (!base) return undefined;
  const heartbeat = heartbeatOf(base, account ? { account } : {});
  return {
    async around(io, scan) {
      let result: Awaited<ReturnType<typeof scan>>;
      try {
        result = await scan();
      } catch (error) {
        if (!io.signal?.aborted) await pingSaying(heartbeat, 'failed', io);
        throw error;
      }
      if (!io.signal?.aborted) await pingSaying(heartbeat, 'complete', io);
      return result;
    },
  };
}
