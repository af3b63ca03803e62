import * as z from 'zod';
import { normalizeDomainName } from '../base/text';
import { parseRfc3339 } from '../reseller/schemas';
import { RdapBootstrapError } from './rdap-errors';
import { rdapRedirectProblem, rdapUrlProblem, readBodyLimited, shownUrl } from './rdap-http';

/**
 * IANA's RDAP bootstrap for domain names (RFC 9224, `dns.json`): which RDAP server answers for
 * which TLD. Read from a URL (default https://data.iana.org/rdap/dns.json) or a file, kept for a
 * day ({@link BootstrapCache}) as RFC 9224 asks clients to, and shown in the report with its
 * `publication` date so a reader knows how fresh the map was.
 */

/** IANA's bootstrap file for domain names. */
export const IANA_DNS_BOOTSTRAP_URL = 'https://data.iana.org/rdap/dns.json';

/** A bootstrap larger than this is not IANA's (about 100 KB today). */
const MAX_BOOTSTRAP_BYTES = 4 * 1024 * 1024;

/** The server that answers for a name, by the longest entry of the bootstrap that ends it. */
export interface RdapService {
  /** The bootstrap entry that matched: `nl`, `co.uk`. */
  readonly entry: string;
  /** Base URL ending in `/`: `<base>domain/<name>` is the query (RFC 7482). */
  readonly baseUrl: string;
}

/** The bootstrap as the report shows it. */
export interface BootstrapInfo {
  /** Where it was read: its URL or file path. */
  readonly source: string;
  /** Its `publication` (RFC 3339), or null when it gives none that reads. */
  readonly publication: string | null;
  /** TLD entries with a server the check may ask. */
  readonly entries: number;
}

/** The parsed bootstrap: entries to base URLs. */
export class RdapBootstrap {
  readonly info: BootstrapInfo;
  private readonly byEntry: ReadonlyMap<string, string>;

  private constructor(info: BootstrapInfo, byEntry: ReadonlyMap<string, string>) {
    this.info = info;
    this.byEntry = byEntry;
  }

  /**
   * Reads RFC 9224 JSON. A service whose entry or URL list is not what the RFC says is skipped,
   * and so is a URL that is not https (plain http only to loopback, for the simulator), or one on
   * this machine or a private network named by a bootstrap read from elsewhere; a document
   * without a `services` list, or without one service left to ask, is refused.
   * @throws RdapBootstrapError naming the source and what is wrong
   */
  static parse(text: string, source: string): RdapBootstrap {
    const shown = shownSource(source);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new RdapBootstrapError(
        `the RDAP bootstrap ${shown} is not JSON (${(error as Error).message})`,
        { status: 0, url: shown },
        { cause: error },
      );
    }
    const services = (value as { services?: unknown } | null)?.services;
    if (!Array.isArray(services))
      throw new RdapBootstrapError(
        `the RDAP bootstrap ${shown} has no "services" list: it is not an RFC 9224 bootstrap file such as ${IANA_DNS_BOOTSTRAP_URL}`,
        { status: 0, url: shown },
      );
    const byEntry = new Map<string, string>();
    for (const service of services) {
      const [entries, urls] = Array.isArray(service) ? service : [];
      if (!Array.isArray(entries) || !Array.isArray(urls)) continue;
      const base = preferredUrl(urls, source);
      if (!base) continue;
      for (const entry of entries)
        if (typeof entry === 'string' && entry.trim()) byEntry.set(normalizeDomainName(entry), base);
    }
    // An empty map would read every TLD as without RDAP for a day, and replace the one kept.
    if (!byEntry.size)
      throw new RdapBootstrapError(
        `the RDAP bootstrap ${shown} names no RDAP server the check may ask (an https URL for a TLD): it is not IANA's`,
        { status: 0, url: shown },
      );
    const published = (value as { publication?: unknown }).publication;
    const publication =
      typeof published === 'string' && !Number.isNaN(parseRfc3339(published)) ? published : null;
    return new RdapBootstrap({ source: shown, publication, entries: byEntry.size }, byEntry);
  }

  /**
   * The server for `domainName`: the longest bootstrap entry that is a whole-label suffix of it
   * (`example.co.uk` asks `co.uk` before `uk`), or null when the bootstrap has none: a TLD without
   * RDAP, which the check counts as not checkable. So is a name that is no DNS name once in ASCII
   * (a lone surrogate, a megabyte label): no registry can answer for it, and sending it would throw
   * (encodeURIComponent) or cost the registry's server a failure that is the name's.
   */
  serviceFor(domainName: string): RdapService | null {
    const name = normalizeDomainName(domainName);
    if (name.length > 253 || !DNS_NAME.test(name)) return null;
    const labels = name.split('.');
    for (let i = 1; i < labels.length; i++) {
      const entry = labels.slice(i).join('.');
      const baseUrl = this.byEntry.get(entry);
      if (baseUrl) return { entry, baseUrl };
    }
    return null;
  }
}

/** A DNS name in ASCII (RFC 1035 letters, digits, hyphens; punycode for an IDN): two labels at least. */
const DNS_NAME = /^[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,126}$/;

/**
 * The URL of a service to use: an https one first (RFC 9224 §3), else loopback http; with a trailing
 * `/`. A bootstrap read from a URL names what a redirect from it could: nothing on this machine or a
 * private network from a bootstrap elsewhere (the Lambda Runtime API listens on 127.0.0.1).
 */
function preferredUrl(urls: readonly unknown[], source: string): string | null {
  const fromUrl = isBootstrapUrl(source) && rdapUrlProblem(source) === null;
  const problem = (u: string) => (fromUrl ? rdapRedirectProblem(source, u) : rdapUrlProblem(u));
  const usable = urls.filter((u): u is string => typeof u === 'string' && problem(u) === null);
  const chosen = usable.find((u) => u.startsWith('https:')) ?? usable[0];
  if (!chosen) return null;
  return chosen.endsWith('/') ? chosen : `${chosen}/`;
}

/**
 * The bootstrap's source as the report and errors show it: a URL as {@link shownUrl} shows it
 * (without credentials, query, fragment, nor a path segment that may be a key); a file path as it is.
 */
export function shownSource(source: string): string {
  return isBootstrapUrl(source) ? shownUrl(source) : source;
}

/** True when RDAP_BOOTSTRAP_URL names a URL rather than a file path. */
export const isBootstrapUrl = (source: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(source);

/** The RDAP_BOOTSTRAP_URL setting's schema: an https URL (http only to loopback), or a file path. */
export const rdapBootstrapSetting = z
  .string()
  .trim()
  .min(1, 'must be a URL or a file path')
  .superRefine((source, ctx) => {
    const problem = isBootstrapUrl(source) ? rdapUrlProblem(source) : null;
    if (problem) ctx.addIssue({ code: 'custom', message: `${problem}; give an https URL or a file path` });
  })
  .default(IANA_DNS_BOOTSTRAP_URL);

/**
 * Reads the bootstrap from a URL: https (or loopback http), redirects refused, at most 4 MiB, within
 * `timeoutMs`.
 * @throws RdapBootstrapError saying what failed, with the URL
 */
export async function fetchBootstrap(
  url: string,
  options: {
    readonly fetch?: typeof fetch;
    readonly timeoutMs?: number;
    /** Stops the read at once (the command line's Ctrl-C). */
    readonly signal?: AbortSignal;
  } = {},
): Promise<RdapBootstrap> {
  const problem = rdapUrlProblem(url);
  const shown = shownSource(url);
  const facts = { status: 0, url: shown };
  if (problem) throw new RdapBootstrapError(`RDAP_BOOTSTRAP_URL ${shown} ${problem}`, facts);
  let res: Response;
  try {
    res = await (options.fetch ?? globalThis.fetch)(url, {
      headers: { Accept: 'application/json' },
      redirect: 'manual',
      signal: options.signal
        ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs ?? 10_000), options.signal])
        : AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    throw new RdapBootstrapError(
      `the RDAP bootstrap ${shown} could not be read (${
        (error as Error).name === 'TimeoutError'
          ? 'no answer in time'
          : String((error as Error).message)
              .split(url)
              .join(shown)
      })`,
      facts,
      { cause: error },
    );
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => undefined);
    throw new RdapBootstrapError(`the RDAP bootstrap ${shown} answered HTTP ${res.status}`, {
      status: res.status,
      url: shown,
    });
  }
  const text = await readBodyLimited(res, MAX_BOOTSTRAP_BYTES);
  if (text === null)
    throw new RdapBootstrapError(`the RDAP bootstrap ${shown} is larger than 4 MiB: it is not IANA's`, {
      status: res.status,
      url: shown,
    });
  return RdapBootstrap.parse(text, url);
}

/** One bootstrap kept: what was read, and when. */
interface Kept {
  readonly bootstrap: RdapBootstrap;
  readonly readAt: number;
}

/** A bootstrap as the check got it: fresh, kept from an earlier scan, or kept because a fresh read failed. */
export interface LoadedBootstrap {
  readonly bootstrap: RdapBootstrap;
  /** ISO 8601: when it was read. */
  readonly read_at: string;
  readonly cached: boolean;
  /** Why a fresh read failed, when a kept one was used instead. */
  readonly stale_because?: string;
}

/**
 * Keeps each bootstrap for `ttlMs` (a day by default: IANA updates it a few times a month), per
 * source, for the life of the process: a warm Lambda container reuses it. When a fresh read fails,
 * the one kept is used, however old, and the report says so.
 */
export class BootstrapCache {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly ttlMs = 86_400_000) {}

  async get(source: string, read: () => Promise<RdapBootstrap>, now: number): Promise<LoadedBootstrap> {
    const kept = this.kept.get(source);
    // A time before the read (a clock that moved back) counts as stale: read again.
    if (kept && now >= kept.readAt && now - kept.readAt < this.ttlMs)
      return { bootstrap: kept.bootstrap, read_at: new Date(kept.readAt).toISOString(), cached: true };
    try {
      const bootstrap = await read();
      this.kept.set(source, { bootstrap, readAt: now });
      return { bootstrap, read_at: new Date(now).toISOString(), cached: false };
    } catch (error) {
      if (!kept) throw error;
      return {
        bootstrap: kept.bootstrap,
        read_at: new Date(kept.readAt).toISOString(),
        cached: true,
        stale_because: (error as Error).message,
      };
    }
  }
}
