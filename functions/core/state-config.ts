import type { Severity } from './classify';
import { ConfigError } from './errors';
import { DEFAULT_STATE_POLICY, type StatePolicy } from './state';

/** Environment variables of memory between scans, shared by the CLI, the Lambda and the construct. */
export const STATE_ENV = {
  /** CLI: `PATH` of a JSON file, or `dynamodb:TABLE` (the `--state` flag overrides it). */
  state: 'STATE',
  /** Lambda: the state table's name, set by StateTable.grantReadWrite. */
  tableName: 'STATE_TABLE_NAME',
  /** Days-left rungs, comma-separated: `30,14,7,3,1`. */
  thresholds: 'ALERT_THRESHOLDS',
  criticalRepeatHours: 'CRITICAL_REPEAT_HOURS',
  /** 0 turns the weekly summary off. */
  summaryEveryDays: 'SUMMARY_EVERY_DAYS',
} as const;

function wholeNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
    throw new ConfigError(
      `${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(text)})`,
    );
  return Number(text);
}

/** The notify-on-change policy from the environment; errors name the variable. */
export function loadStatePolicy(env: NodeJS.ProcessEnv, minSeverity: Severity): StatePolicy {
  const ladder = env[STATE_ENV.thresholds]?.trim();
  let thresholds = DEFAULT_STATE_POLICY.thresholds;
  if (ladder) {
    const parts = ladder.split(',').map((p) => p.trim());
    if (!parts.every((p) => /^\d+$/.test(p) && Number(p) >= 1 && Number(p) <= 3650))
      throw new ConfigError(
        `${STATE_ENV.thresholds} must list whole numbers of days from 1 to 3650, comma-separated, e.g. 30,14,7,3,1 (got ${JSON.stringify(ladder)})`,
      );
    thresholds = [...new Set(parts.map(Number))].sort((a, b) => b - a);
  }
  return {
    thresholds,
    criticalRepeatHours: wholeNumber(
      env,
      STATE_ENV.criticalRepeatHours,
      DEFAULT_STATE_POLICY.criticalRepeatHours,
      1,
      24 * 365,
    ),
    summaryEveryDays: wholeNumber(
      env,
      STATE_ENV.summaryEveryDays,
      DEFAULT_STATE_POLICY.summaryEveryDays,
      0,
      365,
    ),
    minSeverity,
  };
}
