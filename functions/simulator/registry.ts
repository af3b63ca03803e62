import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExpectedFinding, Portfolio, RawRecord } from './portfolio';

/**
 * The simulator's registry side: RDAP servers (RFC 7480, 9083) on loopback, one HTTP server per
 * registry so each is its own RDAP server with its own pace and faults, and the bootstrap file
 * (RFC 9224) naming them. What a registry answers follows the reseller simulator's record of the
 * domain as it is now, unless a scenario says otherwise: so every try-out and test of the registry
 * check runs offline, with agreeing domains, a renewal that never reached the registry, redemption,
 * hold, a server that fails and a TLD without RDAP.
 */

/** What the registry says about one domain, against the reseller's record. */
export const REGISTRY_SCENARIOS = [
  'agree',
  'stale_renewal',
  'redemption',
  'client_hold',
  'server_hold',
  'unknown',
  'bare',
] as const;
export type RegistryScenario = (typeof REGISTRY_SCENARIOS)[number];

/** One simulated registry: the TLDs it serves and how it answers. */
export interface SimulatedRegistry {
  readonly name: string;
  readonly tlds: readonly string[];
  /** False for a registry that publishes no `expiration` event (as SIDN does for .nl). */
  readonly publishesExpiry: boolean;
  /** Send EPP's own status words (`clientHold`) instead of RDAP's, as some registries do. @default false */
  readonly eppWords?: boolean;
  /** A gTLD registry: after expiry it renews by itself for a year (`auto renew period`). @default false */
  readonly autoRenews?: boolean;
  /** Answers every domain lookup with this status (a registry whose RDAP is down). @default none */
  readonly failsWith?: number;
  /**
   * One backend of this many behind a load balancer is broken: every this-many-th domain lookup
   * (the first, then every n-th after it, whatever the name) answers 404 for a domain it knows.
   * Deterministic, for the registry check's defence against 404s that do not repeat. @default none
   */
  readonly flakyEvery?: number;
}

/**
 * The default layout: .com and .org (a gTLD registry), .nl (no expiry published), .uk and .au
 * (the latter in EPP's words), .be (down: 503 for every lookup); .eu and .de have no RDAP at all.
 */
export const DEFAULT_REGISTRIES: readonly SimulatedRegistry[] = [
  { name: 'gtld', tlds: ['com', 'org'], publishesExpiry: true, autoRenews: true },
  { name: 'sidn', tlds: ['nl'], publishesExpiry: false },
  { name: 'nominet', tlds: ['uk'], publishesExpiry: true },
  { name: 'auda', tlds: ['au'], publishesExpiry: true, eppWords: true },
  { name: 'dnsbelgium', tlds: ['be'], publishesExpiry: true, failsWith: 503 },
];

/** The bootstrap's `publication`: fixed, so the try-outs print the same every day. */
export const SIMULATED_BOOTSTRAP_PUBLICATION = '2026-11-20T18:00:00Z';

/** A fault injected into one RDAP server's next matching lookups. */
export type RegistryFault =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string }
  | { readonly kind: 'hang' }
  | { readonly kind: 'malformed' };

export interface RegistrySimulatorOptions {
  /** The reseller's record of a domain as it is now (the reseller simulator's `domain`). */
  readonly lookup: (name: string) => RawRecord | undefined;
  /** What differs from the reseller's record, by name. @default every domain agrees */
  readonly scenarios?: ReadonlyMap<string, RegistryScenario>;
  /** @default DEFAULT_REGISTRIES */
  readonly registries?: readonly SimulatedRegistry[];
  /** The clock expiry is judged against (an expired gTLD domain is auto-renewed). @default Date.now */
  readonly now?: () => number;
  /** Every answer leaves this long after its request arrived. @default 0 */
  readonly latencyMs?: number;
  /** How many lookups each server's `requests` keeps, the newest (as the reseller simulator's). @default 100 000 */
  readonly requestLog?: number;
}

/** One lookup as a server saw it. */
export interface RegistryRequest {
  readonly name: string;
  /** performance.now() when it arrived. */
  readonly at: number;
  /** performance.now() when its answer was sent; undefined while it has none. */
  answeredAt?: number;
  readonly status?: number;
  readonly accept: string | undefined;
}

/** One running RDAP server. */
export interface RegistryServerView {
  readonly url: string;
  readonly requests: RegistryRequest[];
  /** The most lookups it had in flight at once. */
  readonly maxInFlight: number;
}

export interface RegistrySimulator {
  /** The bootstrap (RFC 9224) naming every server. */
  readonly bootstrap: { version: string; publication: string; description: string; services: string[][][] };
  /** Where the bootstrap is served (the first server's `/dns.json`). */
  readonly bootstrapUrl: string;
  readonly servers: Readonly<Record<string, RegistryServerView>>;
  /** Writes the bootstrap to `path`, for RDAP_BOOTSTRAP_URL as a file. */
  writeBootstrap(path: string): void;
  setScenario(name: string, scenario: RegistryScenario): void;
  injectFault(server: string, fault: RegistryFault, times?: number): void;
  /** Drops the faults not yet spent. */
  clearFaults(): void;
  close(): Promise<void>;
}

const DAY = 86_400_000;
const RDAP_TYPE = 'application/rdap+json';
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

const EPP_WORDS: Readonly<Record<string, string>> = {
  active: 'ok',
  'client hold': 'clientHold',
  'server hold': 'serverHold',
  'redemption period': 'redemptionPeriod',
  'pending delete': 'pendingDelete',
  'auto renew period': 'autoRenewPeriod',
  'client transfer prohibited': 'clientTransferProhibited',
};

/** The RDAP domain object a registry answers with, or null for "not found". */
export function registryAnswer(
  name: string,
  record: RawRecord | undefined,
  scenario: RegistryScenario,
  registry: SimulatedRegistry,
  now: number,
): Record<string, unknown> | null {
  if (!record || scenario === 'unknown') return null;
  // A domain object with neither a status nor an expiration: it says nothing either way.
  if (scenario === 'bare')
    return { rdapConformance: ['rdap_level_0'], objectClassName: 'domain', ldhName: name };
  const parsed = Date.parse(String(record.date_expiry));
  let expiry = Number.isNaN(parsed) ? now + 200 * DAY : parsed;
  let status = ['active', 'client transfer prohibited'];
  const quarantined = Array.isArray(record.status) && record.status.includes('quarantine');
  if (quarantined || scenario === 'redemption') status = ['redemption period', 'pending delete'];
  else if (scenario === 'client_hold') status = ['client hold'];
  else if (scenario === 'server_hold') status = ['server hold'];
  else if (registry.autoRenews && expiry <= now) {
    status = ['active', 'auto renew period'];
    expiry += 365 * DAY;
  }
  if (scenario === 'stale_renewal') expiry -= 365 * DAY;
  const created = Date.parse(String(record.date_created));
  const events: Array<{ eventAction: string; eventDate: string }> = [
    { eventAction: 'registration', eventDate: iso(Number.isNaN(created) ? now - 800 * DAY : created) },
    { eventAction: 'last changed', eventDate: iso(now - 10 * DAY) },
  ];
  if (registry.publishesExpiry) events.push({ eventAction: 'expiration', eventDate: iso(expiry) });
  return {
    rdapConformance: ['rdap_level_0'],
    objectClassName: 'domain',
    handle: `${registry.name.toUpperCase()}-${name}`,
    ldhName: name,
    status: registry.eppWords ? status.map((s) => EPP_WORDS[s] ?? s) : status,
    events,
    nameservers: [
      { objectClassName: 'nameserver', ldhName: 'ns1.simulated-dns.example' },
      { objectClassName: 'nameserver', ldhName: 'ns2.simulated-dns.example' },
    ],
  };
}

/** Starts one RDAP server per registry, and the bootstrap that names them. */
export async function startRegistrySimulator(options: RegistrySimulatorOptions): Promise<RegistrySimulator> {
  const registries = options.registries ?? DEFAULT_REGISTRIES;
  const scenarios = new Map(options.scenarios ?? []);
  const clock = options.now ?? Date.now;
  const running: Array<{ registry: SimulatedRegistry; server: Server; view: MutableView }> = [];
  const faults = new Map<string, Array<{ fault: RegistryFault; left: number }>>();
  const bootstrap = {
    version: '1.0',
    publication: SIMULATED_BOOTSTRAP_PUBLICATION,
    description: 'domain-sentinel simulator: RDAP bootstrap for domain names (RFC 9224)',
    services: [] as string[][][],
  };
  for (const registry of registries) {
    const view: MutableView = { url: '', requests: [], maxInFlight: 0, inFlight: 0 };
    const lookups = { count: 0 };
    const server = createServer((req, res) =>
      answer(req, res, {
        registry,
        view,
        scenarios,
        clock,
        bootstrap,
        faults,
        latencyMs: options.latencyMs ?? 0,
        requestLog: options.requestLog ?? 100_000,
        lookup: options.lookup,
        lookups,
      }),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    view.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    running.push({ registry, server, view });
    bootstrap.services.push([[...registry.tlds], [`${view.url}/`]]);
  }
  const first = running[0];
  return {
    bootstrap,
    bootstrapUrl: first ? `${first.view.url}/dns.json` : '',
    servers: Object.fromEntries(running.map(({ registry, view }) => [registry.name, view])),
    writeBootstrap: (path) => writeFileSync(path, `${JSON.stringify(bootstrap, null, 2)}\n`),
    setScenario: (name, scenario) => scenarios.set(name, scenario),
    injectFault: (server, fault, times = 1) => {
      if (!running.some((r) => r.registry.name === server))
        throw new RangeError(`no simulated registry named ${server}`);
      const list = faults.get(server) ?? [];
      list.push({ fault, left: times });
      faults.set(server, list);
    },
    clearFaults: () => faults.clear(),
    close: async () => {
      await Promise.all(
        running.map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}

interface MutableView {
  url: string;
  requests: RegistryRequest[];
  maxInFlight: number;
  inFlight: number;
}

interface ServerContext {
  readonly registry: SimulatedRegistry;
  readonly view: MutableView;
  readonly scenarios: ReadonlyMap<string, RegistryScenario>;
  readonly clock: () => number;
  readonly bootstrap: object;
  readonly faults: Map<string, Array<{ fault: RegistryFault; left: number }>>;
  readonly latencyMs: number;
  readonly requestLog: number;
  readonly lookup: (name: string) => RawRecord | undefined;
  /** Domain lookups answered so far (the broken backend's turn: flakyEvery). */
  readonly lookups: { count: number };
}

function takeFault(ctx: ServerContext): RegistryFault | undefined {
  const list = ctx.faults.get(ctx.registry.name);
  const entry = list?.[0];
  if (!list || !entry) return undefined;
  if (--entry.left <= 0) list.shift();
  return entry.fault;
}

/** The path of a request, or null when its target is no URL (a request that throws here would end the process). */
function pathOf(req: IncomingMessage): string | null {
  try {
    return new URL(req.url ?? '/', 'http://registry').pathname;
  } catch {
    return null;
  }
}

/** The domain a `/domain/<name>` path names, or null when it is no valid percent-encoding. */
function domainOf(segment: string): string | null {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return null;
  }
}

function answer(req: IncomingMessage, res: ServerResponse, ctx: ServerContext) {
  req.resume();
  const path = pathOf(req);
  let request: { answeredAt?: number; status?: number } = {};
  const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    const write = () => {
      ctx.view.inFlight--;
      request.answeredAt = performance.now();
      request.status = status;
      res.writeHead(status, { 'content-type': RDAP_TYPE, ...headers }).end(JSON.stringify(body));
    };
    if (ctx.latencyMs > 0) setTimeout(write, ctx.latencyMs);
    else write();
  };
  ctx.view.inFlight++;
  if (path === '/dns.json') return send(200, ctx.bootstrap, { 'content-type': 'application/json' });
  const match = path === null ? null : /^\/domain\/([^/]+)$/.exec(path);
  const name = match?.[1] ? domainOf(match[1]) : null;
  if (name === null)
    return send(400, { errorCode: 400, title: 'Bad Request', description: ['unknown path'] });
  request = { name, at: performance.now(), accept: req.headers.accept } as RegistryRequest;
  ctx.view.requests.push(request as RegistryRequest);
  if (ctx.view.requests.length > ctx.requestLog)
    ctx.view.requests.splice(0, ctx.view.requests.length - Math.floor(ctx.requestLog / 2));
  ctx.view.maxInFlight = Math.max(ctx.view.maxInFlight, ctx.view.inFlight);
  const fault = takeFault(ctx);
  if (fault?.kind === 'hang') return; // never answers; close() ends the socket
  if (fault?.kind === 'malformed') {
    ctx.view.inFlight--;
    res.writeHead(200, { 'content-type': RDAP_TYPE }).end('{"objectClassName": "dom');
    return;
  }
  if (fault?.kind === 'status')
    return send(
      fault.status,
      { errorCode: fault.status, title: 'injected fault' },
      fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
    );
  if (ctx.registry.failsWith)
    return send(ctx.registry.failsWith, { errorCode: ctx.registry.failsWith, title: 'Service Unavailable' });
  const record = registryAnswer(
    name,
    ctx.lookup(name),
    ctx.scenarios.get(name) ?? 'agree',
    ctx.registry,
    ctx.clock(),
  );
  const brokenTurn = ctx.registry.flakyEvery ? ctx.lookups.count++ % ctx.registry.flakyEvery === 0 : false;
  if (!record || brokenTurn)
    return send(404, { errorCode: 404, title: 'Not Found', description: [`${name} is not registered`] });
  send(200, record);
}

/**
 * Registry scenarios for a generated portfolio, and what the registry check must find (its ground
 * truth, with the default policy: 7 critical days). Only domains without a finding of their own are
 * given one, so each truth is the domain's one finding: the first eligible domains walk through
 * every scenario (and the first gTLD domain after them its registry does not know: a 404), then
 * about 1 in 100 is a stale renewal and 1 in 150 a redemption or a hold.
 */
export function registryScenarios(
  portfolio: Portfolio,
  now: number,
  registries: readonly SimulatedRegistry[] = DEFAULT_REGISTRIES,
): { scenarios: Map<string, RegistryScenario>; truth: ExpectedFinding[] } {
  const flagged = new Set([...portfolio.truth.findings.map((f) => f.key), ...portfolio.truth.problems]);
  const scenarios = new Map<string, RegistryScenario>();
  const truth: ExpectedFinding[] = [];
  let eligible = 0;
  let unknownPlanted = false;
  for (const record of portfolio.domains) {
    const name = String(record.domain_name);
    const registry = registryOf(name, registries);
    if (flagged.has(name) || !registry || registry.failsWith) continue;
    const k = eligible++;
    let scenario: RegistryScenario | undefined =
      k < 3
        ? (['stale_renewal', 'redemption', 'client_hold'] as const)[k]
        : k === 3
          ? 'server_hold'
          : k % 100 === 50
            ? 'stale_renewal'
            : k % 300 === 150
              ? 'redemption'
              : k % 300 === 250
                ? 'client_hold'
                : undefined;
    // One gTLD domain its registry does not know (404): registry_unknown (docs/registry.md).
    if (!scenario && k > 3 && !unknownPlanted && registry.name === 'gtld') scenario = 'unknown';
    if (!scenario || (scenario === 'stale_renewal' && !registry.publishesExpiry)) continue;
    scenarios.set(name, scenario);
    if (scenario === 'unknown') {
      unknownPlanted = true;
      const critical = Date.parse(String(record.date_expiry)) <= now + 7 * DAY;
      truth.push({ key: name, kind: 'registry_unknown', severity: critical ? 'critical' : 'warning' });
      continue;
    }
    if (scenario === 'stale_renewal') {
      const registryDate = Date.parse(String(record.date_expiry)) - 365 * DAY;
      const critical = registryDate <= now + 7 * DAY;
      truth.push({
        key: name,
        kind: 'registry_expiry_mismatch',
        severity: critical ? 'critical' : 'warning',
      });
    } else
      truth.push({
        key: name,
        kind: scenario === 'redemption' ? 'registry_redemption' : 'registry_hold',
        severity: 'critical',
      });
  }
  return { scenarios, truth };
}

/** The registry serving `name` by the longest TLD entry, as the bootstrap would say. */
export function registryOf(
  name: string,
  registries: readonly SimulatedRegistry[] = DEFAULT_REGISTRIES,
): SimulatedRegistry | undefined {
  const labels = name.toLowerCase().split('.');
  for (let i = 1; i < labels.length; i++) {
    const entry = labels.slice(i).join('.');
    const found = registries.find((r) => r.tlds.includes(entry));
    if (found) return found;
  }
  return undefined;
}
