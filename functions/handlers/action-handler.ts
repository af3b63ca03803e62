import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  type ActionOutcome,
  type ActionPort,
  decideAction,
  keptQuarantineOf,
  MemoryUnreadableError,
  type SilenceAction,
} from '../core/decisions/action-decision';
import { classify } from '../core/findings/classify';
import type { SecretSource } from '../core/links/secrets';
import type { ActionStore } from '../core/memory/actions';
import { findingWithMemory } from '../core/memory/renewal-memory';
import { type DomainMemory, readDomainMemory } from '../core/memory/state';
import { keptForLink } from '../core/memory/unjudged-memory';
import { renderActionConfirmPage, renderFindingChangedPage } from '../core/pages/action-page';
import { renderMessagePage } from '../core/pages/restore-page';
import { ResellerClient } from '../core/reseller/client';
import { loadRestoreSettings, parseSetting, type RawSettings } from '../core/scan/config';
import { markFinding, resolvePolicies } from '../core/scan/policies';
import { undocumentedStatusProblem } from '../core/scan/scan-problems';
import { answer, lowerCaseKeys, parseFormBody, requestLogFields, wantsJson } from './http-answer';
import { RESELLER_BUDGET_MS, type RestoreLogEntry } from './restore-handler';

/**
 * The HTTP mapping of the snooze and acknowledge decisions (functions/core/decisions/action-decision.ts):
 * an API Gateway proxy event in, a page or JSON out. Shared by the web Lambda and `sentinel serve`.
 */

export interface ActionDeps {
  readonly settings: () => RawSettings;
  readonly secrets: SecretSource;
  /** Where snoozes and acknowledgements go: the state store. */
  readonly store: () => ActionStore | Promise<ActionStore>;
  readonly log: (entry: RestoreLogEntry & { readonly action: SilenceAction }) => void;
  /** @default Date.now */
  readonly clock?: () => number;
  readonly fetch?: typeof fetch;
  /** @default 10 000 ms, as restore */
  readonly resellerBudgetMs?: number;
}

/** One handler for both actions; the route says which. */
export function createActionHandler(deps: ActionDeps) {
  const clock = deps.clock ?? Date.now;
  return async (action: SilenceAction, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const method = event.httpMethod.toUpperCase();
    const domain = event.pathParameters?.domain ?? '';
    const headers = lowerCaseKeys(event.headers);
    const now = clock();
    // A body that cannot be a form is refused before anything else is looked at: nothing is acted on.
    const read =
      method === 'POST' ? parseFormBody(event, headers['content-type']) : { ok: true as const, form: {} };
    const outcome: ActionOutcome = read.ok
      ? await decideAction({
          action,
          method,
          domain,
          token: event.queryStringParameters ?? {},
          form: read.form,
          now,
          signingKeys: () => deps.secrets.signingKeys(),
          port: () => actionPort(deps),
        })
      : { kind: 'bad_form', status: read.status, title: read.title, message: read.message };
    deps.log({
      action,
      ...requestLogFields(event, headers, method, domain),
      outcome: outcome.kind,
      status: outcome.status,
      ...(outcome.detail ? { detail: outcome.detail } : {}),
    });
    return respond(method, domain, outcome, wantsJson(headers), now);
  };
}

/** The reseller (to see the domain's finding now) and the store, built once the link is proven valid. */
async function actionPort(deps: ActionDeps): Promise<ActionPort> {
  const raw = deps.settings();
  const settings = loadRestoreSettings(raw);
  const policy = {
    expiryDays: parseSetting('expiryDays', raw.expiryDays),
    criticalDays: parseSetting('criticalDays', raw.criticalDays),
    quarantineDays: parseSetting('quarantineDays', raw.quarantineDays),
  };
  // A domain of a group is judged by its group's thresholds, as the scan judged it.
  const policies = resolvePolicies(parseSetting('policies', raw.policies), {
    classify: policy,
    minSeverity: parseSetting('minSeverity', raw.minSeverity),
  });
  const budget = deps.resellerBudgetMs ?? RESELLER_BUDGET_MS;
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey: await deps.secrets.apiKey(),
    timeoutMs: Math.min(5_000, budget),
    deadline: Date.now() + budget,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const store = await deps.store();
  const clock = deps.clock ?? Date.now;
  return {
    store,
    findFinding: async (name) => {
      // The link's normalised name, looked up in every spelling the account may hold it in.
      const match = await client.findDomain(name);
      if (!match) return null;
      // Judged as the alert was: the record by the rules, then what the scans' memory adds (a
      // renewal_failed the record no longer shows), so the action is on the finding that was sent.
      const now = clock();
      const group = policies.policyFor(match);
      const found = classify(match, now, group ? group.classify : policy);
      // A record memory kept as the finding it remembers (an undocumented status): marked so, as the alert was.
      const read = await memoryOf(store, name);
      // Memory alone knows whether a record of an undocumented status is a quarantine in its last
      // days: without it no silence can be promised (the next scan would end it there).
      if (!read.ok && undocumentedStatusProblem(match, 1) !== null)
        throw new MemoryUnreadableError('the scans’ memory of the domain could not be read', {
          cause: read.error,
        });
      const memory = read.ok ? read.memory : undefined;
      const judged = keptForLink(
        findingWithMemory(found && markFinding(found, group), match, memory, now),
        match,
        memory,
        now,
      );
      return judged ?? keptQuarantineOf(match, memory, now);
    },
  };
}

/**
 * The domain's memory, read back as a scan wrote it (a value that does not parse is a read that
 * failed), or the error that kept it from being read. A record of documented statuses is then
 * decided by the record alone, and the store's own write says what is wrong with it.
 */
async function memoryOf(
  store: ActionStore,
  name: string,
): Promise<{ ok: true; memory: DomainMemory | undefined } | { ok: false; error: unknown }> {
  try {
    const value = await store.memoryOf?.(name);
    return {
      ok: true,
      memory: value === undefined ? undefined : readDomainMemory(value, name, store.location),
    };
  } catch (error) {
    return { ok: false, error };
  }
}

function respond(
  method: string,
  domain: string,
  outcome: ActionOutcome,
  json: boolean,
  now: number,
): APIGatewayProxyResult {
  return answer({
    method,
    status: outcome.status,
    json,
    jsonBody: () => ({
      outcome: outcome.kind,
      message: outcome.message,
      ...(outcome.stored && 'until' in outcome.stored ? { snoozed_until: outcome.stored.until } : {}),
      ...(outcome.changed
        ? {
            now: { kind: outcome.changed.now.kind, severity: outcome.changed.now.severity },
            // Relative to this link's URL, as on the page.
            links: outcome.changed.links,
          }
        : {}),
    }),
    page: () => {
      if (outcome.confirm) return renderActionConfirmPage(domain, outcome.confirm, now);
      if (outcome.changed) return renderFindingChangedPage({ ...outcome, changed: outcome.changed });
      return renderMessagePage({ title: outcome.title, message: outcome.message, ok: outcome.status < 300 });
    },
  });
}
