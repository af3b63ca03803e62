import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AUDIT_MAX_ENTRIES, type AuditEntry, type AuditTrail, parseAuditEntries } from '../core/memory/audit';
import {
  type DomainMemory,
  EMPTY_STATE,
  parseState,
  type ScanMemory,
  type ScanState,
  StateConflictError,
  StateError,
  stateOf,
} from '../core/memory/state';
import { storedDomainKey } from '../core/memory/state-bounds';
import {
  type Lease,
  leaseHolds,
  type NextToSave,
  type OpenedState,
  type StateStore,
  type StoredState,
} from './state-store';

/** A lock file older than this belongs to a process that died inside the few milliseconds it holds one. */
const STALE_LOCK_MS = 30_000;
/** How long to wait for another process's lock before giving up. */
const LOCK_WAIT_MS = 10_000;

interface FileContent {
  readonly format: 'domain-sentinel-state';
  readonly generation: number;
  readonly lease: Lease | null;
  readonly state: ScanState;
  /** The restore attempts, newest first (functions/core/memory/audit.ts); absent until the first. */
  readonly audit?: readonly AuditEntry[];
}

export interface FileStateStoreOptions {
  /**
   * Runs after the temporary file is written and synced, before the rename: tests throw here to
   * play a crash at the worst moment.
   */
  readonly beforeRename?: (tempPath: string) => Promise<void>;
}

/**
 * The state as one JSON file, for the command line. Every write is atomic: a temporary file in
 * the same directory, fsync, rename over the old one, fsync of the directory; a crash leaves the
 * old file or the new one, never half of either. Read-check-write runs under an exclusive lock
 * file (O_EXCL), so concurrent savers take turns and the generation check holds between processes.
 *
 * The file is one JSON text: it is read and written whole, so a scan with a file state holds the
 * whole state as objects while it reads and writes it (about 1 KB a domain). For a laptop and
 * accounts of some ten thousand domains; the DynamoDB store is the one whose memory stays compact.
 */
export class FileStateStore implements StateStore, AuditTrail {
  readonly location: string;
  private readonly requested: string;
  private resolved: Promise<string> | undefined;
  private readonly beforeRename: FileStateStoreOptions['beforeRename'];

  constructor(path: string, options: FileStateStoreOptions = {}) {
    this.requested = path;
    this.location = path;
    this.beforeRename = options.beforeRename;
  }

  /** The file the path names: a symbolic link is followed, so the file read is the file written. */
  private get path(): Promise<string> {
    this.resolved ??= fileBehind(this.requested).catch((error: unknown) => {
      this.resolved = undefined;
      throw new StateError(`cannot open the state file ${this.location}: ${(error as Error).message}`, {
        cause: error,
      });
    });
    return this.resolved;
  }

  /** Domains of each opened state, until readDomains hands them over. */
  private readonly openedDomains = new WeakMap<OpenedState, ScanState['domains']>();
  private readonly openedMemory = new WeakMap<OpenedState, ScanMemory>();

  async open(): Promise<OpenedState> {
    const { state, generation, lease } = await this.load();
    const { domains, ...head } = state;
    const opened: OpenedState = { head, generation, lease };
    this.openedDomains.set(opened, domains);
    return opened;
  }

  async readDomains(opened: OpenedState, memory: ScanMemory): Promise<void> {
    const domains = this.openedDomains.get(opened);
    if (!domains) throw new StateError(`${this.location}: that state was not opened by this store`);
    for (const [stored, value] of Object.entries(domains))
      memory.table.addPrior(storedDomainKey(stored), value);
    this.openedDomains.delete(opened);
    this.openedMemory.set(opened, memory);
  }

  async readDomain(opened: OpenedState, key: string): Promise<DomainMemory | undefined> {
    const domains = this.openedDomains.get(opened);
    if (!domains) throw new StateError(`${this.location}: that state was not opened by this store`);
    // A state from before keys were normalised may keep the domain under its name as read.
    for (const [stored, value] of Object.entries(domains)) if (storedDomainKey(stored) === key) return value;
    return undefined;
  }

  async saveNext(next: NextToSave, opened: OpenedState, owner: string): Promise<void> {
    if (next.memory && this.openedMemory.get(opened) !== next.memory)
      throw new StateError(`${this.location}: the memory to save was not read from this state`);
    await this.locked(async () => {
      const current = await this.read();
      this.check(current, opened.generation, owner, Date.now());
      if (current?.lease?.owner !== owner)
        throw new StateConflictError(`${this.location}: the state lease was lost before the state was saved`);
      const state = next.memory
        ? stateOf({ head: next.head, memory: next.memory, changed: 0 })
        : { ...next.head, domains: current.state.domains };
      await this.write({
        format: 'domain-sentinel-state',
        generation: opened.generation + 1,
        lease: null,
        state,
        ...(current.audit ? { audit: current.audit } : {}),
      });
    });
  }

  async changeDomain(
    key: string,
    update: (memory: DomainMemory | undefined) => DomainMemory,
    opened: OpenedState,
    owner: string,
  ): Promise<void> {
    await this.locked(async () => {
      const current = await this.read();
      this.check(current, opened.generation, owner, Date.now());
      if (current?.lease?.owner !== owner)
        throw new StateConflictError(`${this.location}: the state lease was lost before the state was saved`);
      // A state from before keys were normalised may keep the domain under its name as read.
      const domains = current.state.domains;
      const stored = Object.keys(domains).find((name) => storedDomainKey(name) === key) ?? key;
      await this.write({
        format: 'domain-sentinel-state',
        generation: opened.generation + 1,
        lease: null,
        state: { ...current.state, domains: { ...domains, [stored]: update(domains[stored]) } },
        ...(current.audit ? { audit: current.audit } : {}),
      });
    });
  }

  async load(): Promise<StoredState> {
    const content = await this.read();
    return content
      ? { state: content.state, generation: content.generation, lease: content.lease }
      : { state: EMPTY_STATE, generation: 0, lease: null };
  }

  async claim(generation: number, lease: Lease): Promise<void> {
    await this.locked(async () => {
      const current = await this.read();
      this.check(current, generation, lease.owner, Date.now());
      await this.write({
        format: 'domain-sentinel-state',
        generation,
        lease,
        state: current?.state ?? EMPTY_STATE,
        ...(current?.audit ? { audit: current.audit } : {}),
      });
    });
  }

  async save(state: ScanState, loaded: StoredState, owner: string): Promise<void> {
    await this.locked(async () => {
      const current = await this.read();
      this.check(current, loaded.generation, owner, Date.now());
      if (current?.lease?.owner !== owner)
        throw new StateConflictError(`${this.location}: the state lease was lost before the state was saved`);
      await this.write({
        format: 'domain-sentinel-state',
        generation: loaded.generation + 1,
        lease: null,
        state,
        ...(current?.audit ? { audit: current.audit } : {}),
      });
    });
  }

  async release(generation: number, owner: string): Promise<void> {
    await this.locked(async () => {
      const current = await this.read();
      if (!current || current.generation !== generation || current.lease?.owner !== owner) return;
      await this.write({ ...current, lease: null });
    });
  }

  /**
   * Adds a restore attempt to the trail in the same file, newest first, the oldest dropped beyond
   * AUDIT_MAX_ENTRIES. Under the file's lock, but outside the generation protocol: an attempt is
   * kept whatever a scan is doing, and changes nothing a scan decides on.
   */
  async recordAudit(entry: AuditEntry): Promise<void> {
    await this.locked(async () => {
      const current = await this.read();
      await this.write({
        ...(current ?? { format: 'domain-sentinel-state', generation: 0, lease: null, state: EMPTY_STATE }),
        audit: [entry, ...(current?.audit ?? [])].slice(0, AUDIT_MAX_ENTRIES),
      });
    });
  }

  /** The restore attempts kept, newest first. */
  async listAudit(): Promise<AuditEntry[]> {
    return [...((await this.read())?.audit ?? [])];
  }

  /** Deletes the state file (the audit trail in it too); returns false when there was none. */
  async clear(): Promise<boolean> {
    return this.locked(async () => {
      const existed = (await this.read()) !== null;
      await rm(await this.path, { force: true });
      return existed;
    });
  }

  /** Fails unless the file is still at `generation` and no one else holds a live lease. */
  private check(current: FileContent | null, generation: number, owner: string, now: number): void {
    const at = current?.generation ?? 0;
    if (at !== generation)
      throw new StateConflictError(
        `${this.location}: another scan saved the state first (generation ${at}, expected ${generation})`,
      );
    const lease = current?.lease;
    if (lease && lease.owner !== owner && leaseHolds(lease, now))
      throw new StateConflictError(
        `${this.location}: another scan holds the state until ${new Date(lease.expiresAt).toISOString()}`,
      );
  }

  private async read(): Promise<FileContent | null> {
    let text: string;
    try {
      text = await readFile(await this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new StateError(`cannot read the state file ${this.location}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new StateError(
        `the state file ${this.location} is not JSON (${(error as Error).message}); remove it to start over`,
        { cause: error },
      );
    }
    const content = raw as Partial<FileContent>;
    if (content?.format !== 'domain-sentinel-state' || typeof content.generation !== 'number')
      throw new StateError(
        `${this.location} is not a domain-sentinel state file; point --state elsewhere, or remove it to start over`,
      );
    const lease =
      content.lease && typeof content.lease.owner === 'string' && typeof content.lease.expiresAt === 'number'
        ? { owner: content.lease.owner, expiresAt: content.lease.expiresAt }
        : null;
    return {
      format: 'domain-sentinel-state',
      generation: content.generation,
      lease,
      state: parseState(content.state, this.location),
      // An entry that does not parse (a hand-edited file) is left out; the state is still read.
      ...(Array.isArray(content.audit) ? { audit: parseAuditEntries(content.audit) } : {}),
    };
  }

  private async write(content: FileContent): Promise<void> {
    const path = await this.path;
    const dir = dirname(path);
    await mkdir(dir, { recursive: true });
    const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(content)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.beforeRename?.(temp);
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

  /** Runs `fn` holding `<file>.lock`, created with O_EXCL: one process at a time. */
  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    const path = await this.path;
    const lock = `${path}.lock`;
    await mkdir(dirname(path), { recursive: true });
    const started = Date.now();
    for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
      try {
        const handle = await open(lock, 'wx', 0o600);
        await handle.close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
          throw new StateError(`cannot lock the state file ${this.location}: ${(error as Error).message}`, {
            cause: error,
          });
        const age = await stat(lock).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > STALE_LOCK_MS) {
          await rm(lock, { force: true });
          continue;
        }
        if (Date.now() - started > LOCK_WAIT_MS)
          throw new StateConflictError(
            `${this.location} stayed locked by another process for ${LOCK_WAIT_MS / 1000} s (${lock}); remove the lock file if no scan is running`,
          );
        await new Promise((r) => setTimeout(r, wait));
      }
    }
    try {
      return await fn();
    } finally {
      await rm(lock, { force: true });
    }
  }
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
