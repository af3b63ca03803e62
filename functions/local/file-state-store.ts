import { randomBytes } from 'node:crypto';
import { mkdir, open, readlink, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { notJsonReason } from '../core/base/json';
import { cutText, safeText } from '../core/base/text';
import {
  type AuditEntry,
  type AuditTrail,
  auditCompleted,
  auditWith,
  type ClaimAnswer,
  MemoryRestoreClaims,
  parseAuditEntries,
  type RestoreClaim,
  trimAudit,
} from '../core/memory/audit';
import {
  type DomainMemory,
  EMPTY_HEAD,
  encodeMemory,
  readDomainMemory,
  STATE_VERSION,
  StateConflictError,
  StateError,
  type StateHead,
} from '../core/memory/state';
import { readStateHead, StateDamagedError } from '../core/memory/state-header';
import {
  type Lease,
  leaseHolds,
  type MemorySink,
  type OpenedState,
  readContacts,
  StateStore,
  type StateWrite,
} from '../use-cases/state-store';
import { withFileLock } from './file-lock';
import { readRegularFile } from './regular-file';

const FORMAT = 'domain-sentinel-state';

/** The file as written: the head and every domain's memory under `state`, as stored text. */
interface FileContent {
  readonly format: typeof FORMAT;
  readonly version: typeof STATE_VERSION;
  readonly generation: number;
  readonly lease: Lease | null;
  /**
   * The head, checked, with `domains` beside its fields; each memory, of a domain or a contact, as
   * stored (checked when used: one that cannot be read is a problem record of the scan, not a refusal).
   */
  readonly state: Omit<StateHead, 'contacts'> & {
    readonly contacts: Readonly<Record<string, unknown>>;
    readonly domains: Readonly<Record<string, unknown>>;
  };
  /** The restore attempts, newest first (functions/core/memory/audit.ts); absent until the first. */
  readonly audit?: readonly AuditEntry[];
  /** The live restore claims, by normalised domain name; lapsed ones go at the next claim. */
  readonly restores?: Readonly<Record<string, RestoreClaim>>;
}

const EMPTY_CONTENT: FileContent = {
  format: FORMAT,
  version: STATE_VERSION,
  generation: 0,
  lease: null,
  state: { ...EMPTY_HEAD, domains: {} },
};

export interface FileStateStoreOptions {
  /** Runs after the temporary file is written and synced, before the rename: a test's crash at the worst moment. */
  readonly beforeRename?: (tempPath: string) => Promise<void>;
  /** How long to wait for another process's lock on the file (10 s). */
  readonly lockWaitMs?: number;
}

/**
 * The state as one JSON file, for the command line. Every write is atomic: a temporary file in
 * the same directory, fsync, rename over the old one, fsync of the directory; a crash leaves the
 * old file or the new one, never half of either. Read-check-write runs under an exclusive lock
 * file (O_EXCL), so concurrent savers take turns and the generation check holds between processes.
 * The file is read and written whole: for a laptop and accounts of some ten thousand domains.
 */
export class FileStateStore extends StateStore<Readonly<Record<string, unknown>>> implements AuditTrail {
  private resolved: Promise<string> | undefined;

  constructor(
    readonly location: string,
    private readonly options: FileStateStoreOptions = {},
  ) {
    super();
  }

  /** The file the path names: a symbolic link is followed, so the file read is the file written. */
  private get path(): Promise<string> {
    this.resolved ??= fileBehind(this.location).catch((error: unknown) => {
      this.resolved = undefined;
      throw new StateError(`cannot open the state file ${this.location}: ${(error as Error).message}`, {
        cause: error,
      });
    });
    return this.resolved;
  }

  protected async readHead(): Promise<{ opened: OpenedState; known: Readonly<Record<string, unknown>> }> {
    const { state, generation, lease } = (await this.readContent()) ?? EMPTY_CONTENT;
    const { domains, contacts: stored, ...head } = state;
    const { contacts, ...problems } = readContacts(
      Object.entries(stored).map(([key, value]) => [key, key, { value }]),
    );
    return { opened: { head: { ...head, contacts }, generation, lease, ...problems }, known: domains };
  }

  protected async readMemories(opened: OpenedState, sink: MemorySink): Promise<void> {
    // A scan's save writes every next memory: one that could not be read is left out then.
    for (const [key, value] of Object.entries(this.knownOf(opened))) sink.memory(key, value);
  }

  async readDomain(opened: OpenedState, key: string): Promise<DomainMemory | undefined> {
    const domains = this.knownOf(opened);
    return Object.hasOwn(domains, key) ? readDomainMemory(domains[key], key, this.location) : undefined;
  }

  async claim(generation: number, lease: Lease): Promise<void> {
    await this.update((current) => {
      this.check(current, generation, lease.owner);
      return { ...current, generation, lease };
    });
  }

  /** Always whole: a file is written in one go (StateWrite.saveBy is a table's). */
  async save(opened: OpenedState, owner: string, write: StateWrite): Promise<undefined> {
    await this.locked(async () => {
      const current = (await this.readContent()) ?? EMPTY_CONTENT;
      this.check(current, opened.generation, owner);
      if (current.lease?.owner !== owner)
        throw new StateConflictError(`${this.location}: the state lease was lost before the state was saved`);
      await this.write(
        {
          ...current,
          generation: opened.generation + 1,
          lease: null,
          state: { ...write.head, ...(write.all ? {} : { contacts: current.state.contacts }), domains: {} },
        },
        nextDomainsJson(current.state.domains, write),
      );
    });
    return undefined;
  }

  protected async dropLease(generation: number, owner: string): Promise<void> {
    await this.update((current) =>
      current.generation === generation && current.lease?.owner === owner
        ? { ...current, lease: null }
        : null,
    );
  }

  /** The file's lock for as long as `fn` runs, once no other scan holds a lease in the file: every claim and save takes that lock and checks that lease. */
  async holdDamaged<T>(_damaged: StateDamagedError, lease: Lease, fn: () => Promise<T>): Promise<T> {
    return this.locked(async () => {
      // The lease as stored, read past any damage of the rest (none when it cannot be read).
      this.checkLease(leaseOf((await this.readJson())?.value?.lease), lease.owner);
      return fn();
    });
  }

  /**
   * The restore trail and claims (functions/core/memory/audit.ts) are kept in the same file, under
   * its lock but outside the generation protocol: an attempt is kept whatever a scan is doing, and
   * changes nothing a scan decides on.
   */
  async recordAudit(entry: AuditEntry): Promise<void> {
    await this.update((current) => ({ ...current, audit: auditWith(current.audit ?? [], entry) }));
  }

  /** Keeps a restore about to be sent (one locked write), under a random id the outcome replaces it by. */
  async beginAudit(entry: AuditEntry): Promise<string> {
    const id = randomBytes(8).toString('hex');
    await this.update((current) => ({
      ...current,
      audit: trimAudit([{ ...entry, id }, ...(current.audit ?? [])]),
    }));
    return id;
  }

  async completeAudit(ref: string, entry: AuditEntry): Promise<void> {
    await this.update((current) => ({ ...current, audit: auditCompleted(current.audit ?? [], ref, entry) }));
  }

  /** Takes the claim on restoring `domain` as one process's claims do, the file's kept between processes. */
  async claimRestore(domain: string, claim: RestoreClaim, now: number): Promise<ClaimAnswer> {
    let answer: ClaimAnswer = { taken: false };
    await this.update(async (current) => {
      const claims = new MemoryRestoreClaims(current.restores);
      answer = await claims.claimRestore(domain, claim, now);
      return answer.taken ? { ...current, restores: claims.held() } : null;
    });
    return answer;
  }

  async releaseRestore(domain: string, owner: string): Promise<void> {
    await this.update(async (current) => {
      if (current.restores?.[domain]?.owner !== owner) return null;
      const claims = new MemoryRestoreClaims(current.restores);
      await claims.releaseRestore(domain, owner);
      return { ...current, restores: claims.held() };
    });
  }

  /** The restore attempts kept, newest first. */
  async listAudit(): Promise<AuditEntry[]> {
    return [...((await this.readContent())?.audit ?? [])];
  }

  /** Deletes the state file (the audit trail in it too); returns false when there was none. */
  async clear(): Promise<boolean> {
    return this.locked(async () => {
      // Damaged state (not JSON, a part of another type) is this store's to remove: the scan over it
      // says to reset it. A file that is not state at all is refused, so a mistyped path stays.
      const existed = await this.readContent().then(
        (content) => content !== null,
        async (error: unknown) => {
          if (error instanceof StateDamagedError) return true;
          // A file with the state's format marker whose values do not read (a generation that is
          // not a whole number, another version's): the error names the reset as the remedy.
          if (
            error instanceof StateError &&
            (await this.readJson().catch(() => null))?.value?.format === FORMAT
          )
            return true;
          throw error;
        },
      );
      await rm(await this.path, { force: true });
      return existed;
    });
  }

  /** Fails unless the file is still at `generation` and no one else holds a live lease. */
  private check(current: FileContent, generation: number, owner: string): void {
    if (current.generation !== generation)
      throw new StateConflictError(
        `${this.location}: another scan saved the state first (generation ${current.generation}, expected ${generation})`,
      );
    this.checkLease(current.lease, owner);
  }

  private checkLease(lease: Lease | null, owner: string): void {
    if (lease && lease.owner !== owner && leaseHolds(lease, Date.now()))
      throw new StateConflictError(
        `${this.location}: another scan holds the state until ${new Date(lease.expiresAt).toISOString()}`,
        { heldUntil: lease.expiresAt },
      );
  }

  private async readContent(): Promise<FileContent | null> {
    const json = await this.readJson();
    if (json?.notJson === undefined) return json && this.contentOf(json.value);
    const reason = notJsonReason(json.notJson);
    throw new StateDamagedError(
      `the state file ${this.location} is not JSON (${reason}); remove it to start over`,
      { item: this.location, damage: `not JSON (${reason})` },
      { cause: json.notJson },
    );
  }

  /** The file as JSON, whatever it holds (`notJson` when it is not); null when there is no file. */
  private async readJson(): Promise<{ value?: Partial<FileContent> | null; notJson?: unknown } | null> {
    let text: string;
    try {
      text = await readRegularFile(await this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new StateError(`cannot read the state file ${this.location}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      return { value: JSON.parse(text) };
    } catch (notJson) {
      return { notJson };
    }
  }

  private contentOf(content: Partial<FileContent> | null | undefined): FileContent {
    if (content?.format !== FORMAT)
      throw new StateError(
        `${this.location} is not a domain-sentinel state file; point --state elsewhere, or remove it to start over`,
      );
    // JSON reads 1e400 as Infinity and 2^53 + 1 as 2^53: only a safe whole number is a generation.
    if (!Number.isSafeInteger(content.generation) || (content.generation as number) < 0)
      throw new StateError(
        `the state in ${this.location} cannot be used (generation: ${shownGeneration(content.generation)} is not a whole number); correct that value, point --state elsewhere, or remove the state to start over`,
      );
    if (content.version !== STATE_VERSION)
      throw new StateError(
        `the state file ${this.location} was written by another version of domain-sentinel (format ${JSON.stringify(content.version ?? null)}, this one reads ${STATE_VERSION}); remove it to start over`,
      );
    const { domains, contacts, ...header } = (content.state ?? {}) as Record<string, unknown>;
    for (const [name, value] of [
      ['domains', domains],
      ['contacts', contacts ?? {}],
    ] as const)
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new StateDamagedError(
          `the state in ${this.location} cannot be used (${name}: not an object); remove it to start over`,
          { item: this.location, damage: `${name}: not an object` },
        );
    // The head is checked whenever the file is read (any write keeps it); each memory when it is used.
    const state = {
      ...readStateHead(header, {}, this.location, { item: this.location }),
      contacts: (contacts ?? {}) as Record<string, unknown>,
      domains: domains as Record<string, unknown>,
    };
    return {
      format: FORMAT,
      version: STATE_VERSION,
      generation: content.generation as number,
      lease: leaseOf(content.lease),
      state,
      // An entry that does not parse (a hand-edited file) is kept as one that could not be read; the state is still read.
      ...(Array.isArray(content.audit) ? { audit: parseAuditEntries(content.audit) } : {}),
      ...(content.restores ? { restores: restoreClaimsOf(content.restores) } : {}),
    };
  }

  /** Writes `content`, its domains from `domainsJson` when given (memories as encodeMemory writes them). */
  private async write(content: FileContent, domainsJson?: string): Promise<void> {
    const path = await this.path;
    const dir = dirname(path);
    await mkdir(dir, { recursive: true });
    const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(`${fileText(content, domainsJson)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.options.beforeRename?.(temp);
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      if (error instanceof StateError) throw error;
      throw new StateError(`cannot write the state file ${this.location}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    await syncDirectory(dir);
  }

  /** Writes what `change` makes of the file (or of an empty state), under its lock; null writes nothing. */
  private async update(
    change: (current: FileContent) => FileContent | null | Promise<FileContent | null>,
  ): Promise<void> {
    await this.locked(async () => {
      const next = await change((await this.readContent()) ?? EMPTY_CONTENT);
      if (next) await this.write(next);
    });
  }

  /** Runs `fn` holding the file's lock (functions/local/file-lock.ts): one caller at a time. */
  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(await this.path, this.location, fn, this.options.lockWaitMs);
  }
}

/** A lease as stored, when it reads as one (a hand edit may have broken it: then none). */
function leaseOf(lease: Partial<Lease> | null | undefined): Lease | null {
  return lease && typeof lease.owner === 'string' && typeof lease.expiresAt === 'number'
    ? { owner: lease.owner, expiresAt: lease.expiresAt }
    : null;
}

/** The restore claims as stored; one that does not read as a claim (a hand edit) is left out, so it holds nothing. */
function restoreClaimsOf(value: unknown): Record<string, RestoreClaim> {
  const claims: Record<string, RestoreClaim> = Object.create(null);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return claims;
  for (const [name, claim] of Object.entries(value))
    if (typeof claim?.owner === 'string' && typeof claim?.until === 'number')
      claims[name] = { owner: claim.owner, until: claim.until };
  return claims;
}

/** The domains of the next file as JSON: every next memory (a scan's save), or the stored ones with the changes. */
function nextDomainsJson(stored: Readonly<Record<string, unknown>>, write: StateWrite): string {
  const entries: string[] = [];
  const entry = (key: string, json: string) => entries.push(`${JSON.stringify(key)}:${json}`);
  if (write.all) for (const [key, memory] of write.all) entry(key, encodeMemory(memory));
  else {
    for (const [key, value] of Object.entries(stored))
      if (!write.changed.has(key)) entry(key, JSON.stringify(value));
    for (const [key, memory] of write.changed) if (memory !== null) entry(key, encodeMemory(memory));
  }
  return `{${entries.join(',')}}`;
}

/** The file's text: `content`, its domains replaced by `domainsJson` when given. */
function fileText(content: FileContent, domainsJson: string | undefined): string {
  if (domainsJson === undefined) return JSON.stringify(content);
  const { state, ...rest } = content;
  const { domains: _domains, ...head } = state;
  return `${JSON.stringify(rest).slice(0, -1)},"state":${JSON.stringify(head).slice(0, -1)},"domains":${domainsJson}}}`;
}

/**
 * The file behind `path`: itself, or the file a symbolic link points at (also one not created yet),
 * so the rename of a save replaces that file and never the link.
 */
async function fileBehind(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    return resolve(dirname(absolute), await readlink(absolute));
  } catch {
    return absolute; // no file and no link yet: the first save creates it
  }
}

/** Makes the rename durable; some platforms cannot open a directory for sync, and that is no error. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // EISDIR/EPERM on platforms without directory fsync: the rename itself is still atomic.
  }
}

/** A stored generation as an error shows it: a number as JavaScript reads it (1e400 is Infinity), anything else as JSON, cut. */
function shownGeneration(value: unknown): string {
  return typeof value === 'number' ? String(value) : safeText(cutText(JSON.stringify(value ?? null), 40));
}
