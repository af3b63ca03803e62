import type { Severity } from '../findings/classify';
import { ENV, parseSetting } from '../scan/config';
import type { EscalationPolicy, StatePolicy } from './state';

/** Environment variables of memory between scans (defined with every other setting in config.ts). */
export const STATE_ENV = {
  /** CLI: `PATH` of a JSON file, or `dynamodb:TABLE` (the `--state` flag overrides it). */
  state: ENV.state,
  /** Lambda: the state table's name, set by StateTable.grantReadWrite. */
  tableName: ENV.stateTableName,
  /** Days-left rungs, comma-separated: `30,14,7,3,1`. */
  thresholds: ENV.alertThresholds,
  criticalRepeatHours: ENV.criticalRepeatHours,
  /** 0 turns the weekly summary off. */
  summaryEveryDays: ENV.summaryEveryDays,
} as const;

/** The notify-on-change policy from the environment, with the one schema of each setting; errors name the variable. */
export function loadStatePolicy(
  env: NodeJS.ProcessEnv,
  minSeverity: Severity,
  escalation?: EscalationPolicy,
): StatePolicy {
  return {
    thresholds: parseSetting('alertThresholds', env[ENV.alertThresholds]),
    criticalRepeatHours: parseSetting('criticalRepeatHours', env[ENV.criticalRepeatHours]),
    summaryEveryDays: parseSetting('summaryEveryDays', env[ENV.summaryEveryDays]),
    minSeverity,
    // Only the two numbers: the escalation recipients are the stack's subscriptions.
    ...(escalation
      ? { escalation: { afterHours: escalation.afterHours, withinDays: escalation.withinDays } }
      : {}),
  };
}
