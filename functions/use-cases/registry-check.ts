import { readFile } from 'node:fs/promises';
import {
  BootstrapCache,
  fetchBootstrap,
  isBootstrapUrl,
  type LoadedBootstrap,
  RdapBootstrap,
} from '../core/registry/bootstrap';
import { RdapClient } from '../core/registry/rdap-client';
import { RdapBootstrapError } from '../core/registry/rdap-errors';
import { type Deadline, deadlineAt } from '../core/reseller/transport';
import type { ScanSettings } from '../core/scan/config';
import type { RegistryScanOptions } from '../core/scan/registry-scan';

/**
 * What the registry check needs from the world: the RDAP bootstrap read from its URL or file (kept
 * for a day at module scope, so a warm Lambda container reads it once a day), and an RDAP client
 * that sends over the network. On AWS this is the scan function's only egress besides the reseller
 * API and AWS itself: a GET of IANA's bootstrap and `GET <registry>/domain/<name>` per domain
 * checked (docs/registry.md).
 */

const bootstraps = new BootstrapCache();

/** Reads RDAP_BOOTSTRAP_URL: a file path, or a URL fetched with `fetch`. */
export async function readBootstrap(
  source: string,
  options: { readonly fetch?: typeof fetch; readonly timeoutMs?: number; readonly signal?: AbortSignal } = {},
): Promise<RdapBootstrap> {
  if (isBootstrapUrl(source)) return fetchBootstrap(source, options);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    throw new RdapBootstrapError(
      `the RDAP bootstrap file ${source} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set RDAP_BOOTSTRAP_URL to a file that exists or to a URL`,
      { status: 0, url: source },
      { cause: error },
    );
  }
  return RdapBootstrap.parse(text, source);
}

/** The registry check's options for a scan, from its settings. */
export function registryScanOptions(
  settings: ScanSettings,
  run: {
    readonly deadline?: Deadline;
    readonly fetch?: typeof fetch;
    readonly recheck?: RegistryScanOptions['recheck'];
    /** Stops the lookups at once (the command line's Ctrl-C). */
    readonly signal?: AbortSignal;
    /** @default the module's cache (a day per source) */
    readonly cache?: BootstrapCache;
  },
): RegistryScanOptions {
  const source = settings.rdapBootstrapUrl;
  const cache = run.cache ?? bootstraps;
  const fetchImpl = run.fetch;
  return {
    bootstrap: (): Promise<LoadedBootstrap> =>
      cache.get(
        source,
        () =>
          readBootstrap(source, {
            // Within the scan's time: what is left of it after the account's read is the publish's.
            timeoutMs: Math.max(
              1,
              Math.min(
                settings.rdapTimeoutMs,
                (deadlineAt(run.deadline) ?? Number.POSITIVE_INFINITY) - Date.now(),
              ),
            ),
            ...(fetchImpl ? { fetch: fetchImpl } : {}),
            ...(run.signal ? { signal: run.signal } : {}),
          }),
        Date.now(),
      ),
    client: new RdapClient({
      timeoutMs: settings.rdapTimeoutMs,
      ...(run.deadline !== undefined ? { deadline: run.deadline } : {}),
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
      ...(run.signal ? { signal: run.signal } : {}),
    }),
    budget: settings.rdapQueryBudget,
    days: settings.registryCheckDays,
    toleranceDays: settings.registryToleranceDays,
    ...(run.recheck ? { recheck: run.recheck } : {}),
  };
}
