import { signRestoreLink } from '../core/links/links';
import type { SecretSource } from '../core/links/secrets';
import { ResellerClient } from '../core/reseller/client';
import { type Deadline, deadlineAt } from '../core/reseller/transport';
import type { ScanSettings } from '../core/scan/config';
import type { RegistryScanOptions } from '../core/scan/registry-scan';
import { attachLinks } from '../core/scan/report-links';
import { type Report, type ScanOptions, scanAccount } from '../core/scan/scan';
import { policySetOf } from './publish-alert';
import { registryScanOptions } from './registry-check';

/** Everything one scan needs besides settings: secrets and the run's clock and budget. */
export interface ScanJobInput {
  readonly settings: ScanSettings;
  /** The API key, and the link signing keys when settings.linkBaseUrl is set. */
  readonly secrets: SecretSource;
  /** The instant the rules evaluate against. */
  readonly now: number;
  /** Epoch ms by which the scan must have read the account (a function: a deadline that moves while it reads). */
  readonly deadline?: Deadline;
  /** Told the account's size when the read's page 1 of the whole domain list arrives (ResellerClientOptions.onAccountSize). */
  readonly onAccountSize?: (domains: number) => void;
  readonly fetch?: typeof fetch;
  /**
   * Sees every domain read (memory between scans). Forces full mode: only a read of the whole
   * account proves that a domain left it.
   */
  readonly observe?: ScanOptions['observe'];
  /** The account's name when the deployment scans several: the report's `source.account`. */
  readonly account?: string;
  /** Aborts the read and the registry check at once (the command line's Ctrl-C): requests in flight and waits stop. */
  readonly signal?: AbortSignal;
  /** With memory: the remembered names the read did not list (ScanOptions.unlisted). */
  readonly unlisted?: ScanOptions['unlisted'];
  /** With the registry check and memory: the names memory remembers a registry finding for (docs/registry.md). */
  readonly registryRecheck?: RegistryScanOptions['recheck'];
}

/** Builds the reseller client from settings and runs the scan: the one path the CLI and the Lambda share. */
export async function runScanJob(input: ScanJobInput): Promise<Report> {
  const { settings, deadline } = input;
  const client = new ResellerClient({
    baseUrl: settings.resellerBaseUrl,
    apiKey: await input.secrets.apiKey(),
    perPage: settings.perPage,
    concurrency: settings.concurrency,
    timeoutMs: settings.requestTimeoutMs,
    ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
    ...(input.fetch ? { fetch: input.fetch } : {}),
    maxResponseBytes: settings.maxResponseMb * 1024 * 1024,
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.onAccountSize ? { onAccountSize: input.onAccountSize } : {}),
  });
  const linkBaseUrl = settings.linkBaseUrl;
  const keys = linkBaseUrl ? await input.secrets.signingKeys() : undefined;
  const restoreLinkFor =
    linkBaseUrl && keys?.length
      ? (domain: string) =>
          signRestoreLink({
            baseUrl: linkBaseUrl,
            domain,
            keys,
            now: input.now,
            ttlSeconds: settings.linkTtlDays * 86_400,
          })
      : undefined;
  const report = await scanAccount({
    client,
    now: input.now,
    policy: {
      expiryDays: settings.expiryDays,
      criticalDays: settings.criticalDays,
      quarantineDays: settings.quarantineDays,
    },
    ...(settings.policies ? { policies: policySetOf(settings) } : {}),
    // Memory and the registry check's rotating sample both need every domain.
    mode: input.observe || settings.registryCheck ? 'full' : settings.scanMode,
    ...(input.observe ? { observe: input.observe } : {}),
    ...(input.unlisted ? { unlisted: input.unlisted } : {}),
    ...(settings.registryCheck
      ? {
          registry: registryScanOptions(settings, {
            ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
            ...(input.fetch ? { fetch: input.fetch } : {}),
            ...(input.registryRecheck ? { recheck: input.registryRecheck } : {}),
            ...(input.signal ? { signal: input.signal } : {}),
          }),
        }
      : {}),
    ...(restoreLinkFor ? { restoreLinkFor } : {}),
    ...(deadline !== undefined ? { timeBudgetSeconds: budgetFrom(deadline, Date.now()) } : {}),
  });
  // With memory, the comparison may still change a finding (a renewal_failed only memory knows):
  // the stateful scan signs the links once it has (signReportLinks), so each acts on what is shown.
  const named = input.account
    ? {
        ...report,
        source: {
          ...report.source,
          account: input.account,
          ...(settings.accountLabel ? { account_label: settings.accountLabel } : {}),
          time_zone: settings.timeZone,
        },
      }
    : report;
  return input.observe ? named : signReportLinks(named, input, { silencing: false });
}

/**
 * The scan's time budget in seconds from `started`: a deadline that moves (the scheduled scan's,
 * once the read's page 1 sizes the account) is asked when the budget is stated, so a read it cut
 * says the budget then in force, not the one from before it moved.
 */
function budgetFrom(deadline: Deadline, started: number): number | (() => number) {
  const seconds = () => Math.round(((deadlineAt(deadline) as number) - started) / 1000);
  return typeof deadline === 'function' ? seconds : seconds();
}

/**
 * The report with every signed link it can carry (functions/core/scan/report-links.ts), when
 * LINK_BASE_URL is set; `silencing` offers snooze and acknowledge, which need the state store;
 * `owned` sets the links on the report's own finding objects (attachLinks).
 */
export async function signReportLinks<R extends Report>(
  report: R,
  input: Pick<ScanJobInput, 'settings' | 'secrets' | 'now'>,
  how: { readonly silencing: boolean; readonly owned?: boolean },
): Promise<R> {
  const { settings } = input;
  const keys = settings.linkBaseUrl ? await input.secrets.signingKeys() : undefined;
  return settings.linkBaseUrl && keys?.length
    ? attachLinks(
        report,
        {
          baseUrl: settings.linkBaseUrl,
          keys,
          now: input.now,
          ttlDays: settings.linkTtlDays,
          silencing: how.silencing,
        },
        how.owned,
      )
    : report;
}
