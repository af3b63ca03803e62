import type { Severity } from '../findings/classify';
import { ENV, parseSetting } from '../scan/config';
import { DEFAULT_REPEAT, hasRecipients, type Policies, resolveRepeat } from '../scan/policies';
import type { StatePolicy } from './state';

/** The state table's name, set by StateTable.grantReadWrite (defined with every other setting in config.ts). */
export const STATE_ENV = { tableName: ENV.stateTableName } as const;

/**
 * The notify-on-change policy from the environment, with the one schema of each setting (errors
 * name the variable), and from the policies file its escalation and repeat cadence: the top-level
 * `repeat` over the defaults for every domain, each policy's over that for its own.
 */
export function loadStatePolicy(
  env: NodeJS.ProcessEnv,
  minSeverity: Severity,
  policies?: Policies,
): StatePolicy {
  const { escalation, policies: list = [] } = policies ?? {};
  const lapsing = new Set(list.filter((p) => p.letLapse).map((p) => p.name));
  const own = list.filter((p) => !p.letLapse && hasRecipients(p)).map((p) => p.name);
  const rungs = new Map(list.flatMap((p) => (p.alertThresholds ? [[p.name, p.alertThresholds]] : [])));
  const levels = new Map(list.flatMap((p) => (p.minSeverity ? [[p.name, p.minSeverity]] : [])));
  const { repeat, byGroup } = resolveRepeat(policies, {
    ...DEFAULT_REPEAT,
    critical: parseSetting('criticalRepeatHours', env[ENV.criticalRepeatHours]),
  });
  return {
    thresholds: parseSetting('alertThresholds', env[ENV.alertThresholds]),
    ...(rungs.size ? { thresholdsByGroup: rungs } : {}),
    repeat,
    ...(byGroup.size ? { repeatByGroup: byGroup } : {}),
    summaryEveryDays: parseSetting('summaryEveryDays', env[ENV.summaryEveryDays]),
    minSeverity,
    ...(levels.size ? { minSeverityByGroup: levels } : {}),
    // Only the two numbers: the escalation recipients are the stack's subscriptions.
    ...(escalation
      ? { escalation: { afterHours: escalation.afterHours, withinDays: escalation.withinDays } }
      : {}),
    ...(lapsing.size ? { lapsing } : {}),
    ...(own.length ? { ownRecipients: new Set(own) } : {}),
  };
}
