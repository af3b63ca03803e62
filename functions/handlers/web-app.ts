import { ConfigError } from '../core/base/errors';
import type { SecretSource } from '../core/links/secrets';
import type { ActionStore } from '../core/memory/actions';
import type { AuditTrail } from '../core/memory/audit';
import type { ReportStore } from '../core/memory/report-store';
import { parseSetting, type RawSettings } from '../core/scan/config';
import { createActionHandler } from './action-handler';
import type { ProxyHandler } from './http-answer';
import { createRestoreHandler } from './restore-handler';
import {
  createFindingHandler,
  createViewHandler,
  createWebHandler,
  createWholeReportHandler,
} from './web-handler';

/** What the web API needs, wherever it runs (the web Lambda, `sentinel serve`). */
export interface WebAppDeps {
  readonly settings: () => RawSettings;
  readonly secrets: SecretSource;
  /** The state store's snoozes and acknowledgements; null when no state store is configured. */
  readonly actions: () => ActionStore | null | Promise<ActionStore | null>;
  /** Where the latest report is kept; null when none is configured. */
  readonly reports: () => ReportStore | null;
  /** The audit trail of restores (the state store); absent or null when none is configured. */
  readonly audit?: () => AuditTrail | null | Promise<AuditTrail | null>;
  /**
   * One structured line per request; never a secret or a signature. Each entry carries `level`:
   * `error` for an answer of 500 or more (the ops alarm watches those), else `info`.
   */
  readonly log: (message: string, entry: Record<string, unknown>) => void;
  readonly clock?: () => number;
  readonly fetch?: typeof fetch;
}

/** Every route of the web API behind one proxy handler. */
export function createWebApp(deps: WebAppDeps): ProxyHandler {
  const log = (message: string, entry: Record<string, unknown>) =>
    deps.log(message, { level: Number(entry.status) >= 500 ? 'error' : 'info', ...entry });
  const common = {
    settings: deps.settings,
    secrets: deps.secrets,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  };
  return createWebHandler({
    restore: createRestoreHandler({
      ...common,
      ...(deps.audit ? { audit: deps.audit } : {}),
      log: (entry) => log('restore attempt', { ...entry }),
    }),
    action: createActionHandler({
      ...common,
      store: async () => {
        const store = await deps.actions();
        if (!store)
          throw new ConfigError(
            'snooze and acknowledge need the state store (STATE, or STATE_TABLE_NAME in the stack); none is configured',
          );
        return store;
      },
      log: (entry) => log(`${entry.action} attempt`, { ...entry }),
    }),
    whole: createWholeReportHandler({
      secrets: deps.secrets,
      reports: deps.reports,
      ...(deps.clock ? { clock: deps.clock } : {}),
      log: (entry) => log('report view', { ...entry }),
    }),
    finding: createFindingHandler({
      secrets: deps.secrets,
      reports: deps.reports,
      silencing: async () => (await deps.actions()) !== null,
      timeZone: () => alertTimeZone(deps.settings()),
      ...(deps.clock ? { clock: deps.clock } : {}),
      log: (entry) => log('finding view', { ...entry }),
    }),
    view: createViewHandler({
      secrets: deps.secrets,
      reports: deps.reports,
      ...(deps.audit ? { audit: deps.audit } : {}),
      accountLabel: () => deps.settings().accountLabel || undefined,
      timeZone: () => alertTimeZone(deps.settings()),
      ...(deps.clock ? { clock: deps.clock } : {}),
      log: (entry) => log(`${entry.action} view`, { ...entry }),
    }),
  });
}

/**
 * ALERT_TIME_ZONE for the calendar's days; one that does not read as a zone is UTC here, since the
 * scan refuses it at start and says so (a feed must not go down over it).
 */
function alertTimeZone(raw: RawSettings): string | undefined {
  try {
    return parseSetting('timeZone', raw.timeZone);
  } catch {
    return undefined;
  }
}
