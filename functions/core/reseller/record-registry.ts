import { fnv1a } from '../base/hash';

/** What {@link RecordRegistry.admit} made of a record. */
export type Admission =
  | { readonly kind: 'new' }
  /** The same content under the same name: a record read twice (pages shifted, searches overlapped). */
  | { readonly kind: 'repeat' }
  /** Other content under a name already read: a problem (the second may be the quarantined one). */
  | { readonly kind: 'second'; readonly reason: string }
  /** A name already read in another spelling (letter case; for a domain white space around it, a trailing dot, punycode): a problem. */
  | { readonly kind: 'case'; readonly reason: string };

/**
 * The names read so far, with each one's content fingerprint, to tell a record read twice from
 * another record under the same name. One per listing in paginate, and one across the searches a
 * filtered read merges.
 */
export class RecordRegistry {
  /** Every name read, with its record's fingerprint. */
  private readonly fingerprints = new Map<string, number>();
  /** Folded form → the first name read of it, for names that fold to something else (few). */
  private readonly byFolded = new Map<string, string>();
  /** Names equal to their folded form that were not the first of it (fewer still). */
  private readonly cased = new Set<string>();

  constructor(
    private readonly resource: string,
    private readonly fold: (key: string) => string,
  ) {}

  /**
   * Whether a record of `key`, or of a name folding to the same (another letter case), was read.
   * From what admit holds already: no second copy of the names.
   */
  has(key: string): boolean {
    const folded = this.fold(key);
    return this.fingerprints.has(key) || this.fingerprints.has(folded) || this.byFolded.has(folded);
  }

  /** Every name read, as the server spelled it. */
  names(): Iterable<string> {
    return this.fingerprints.keys();
  }

  /** Registers `record` under `key` (the name as the server sent it); `where` ends a second record's reason. */
  admit(key: string, record: unknown, where = ''): Admission {
    // Enough to tell a repeated record from a different one: not a defence against a forger.
    const fingerprint = fnv1a(JSON.stringify(record) ?? '');
    const seen = this.fingerprints.get(key);
    if (seen === fingerprint) return { kind: 'repeat' };
    if (seen !== undefined) {
      return {
        kind: 'second',
        reason: `a second ${this.resource} record named ${JSON.stringify(key)} with different content${where}; only the first was checked`,
      };
    }
    const folded = this.fold(key);
    let earlier = this.byFolded.get(folded);
    if (earlier === undefined && this.fingerprints.has(folded) && !this.cased.has(folded)) earlier = folded;
    this.fingerprints.set(key, fingerprint);
    if (earlier !== undefined) {
      if (folded === key) this.cased.add(key);
      const how = howSpelledApart(earlier, key);
      return {
        kind: 'case',
        reason: `duplicate ${this.resource} name ${how}: ${JSON.stringify(earlier)} and ${JSON.stringify(key)}; only the first was checked`,
      };
    }
    if (folded !== key) this.byFolded.set(folded, key);
    return { kind: 'new' };
  }
}

/**
 * What sets two spellings of one name apart, each difference named: `differing only in case`,
 * `differing in white space around it and letter case`. Without a regex: a name from the API may be
 * a megabyte long.
 */
function howSpelledApart(earlier: string, key: string): string {
  if (earlier.toLowerCase() === key.toLowerCase()) return 'differing only in case';
  const trimmed = [earlier.trim(), key.trim()] as const;
  const dotted = trimmed.map((name) => name.endsWith('.'));
  const bare = trimmed.map((name, i) => (dotted[i] ? name.slice(0, -1) : name));
  const [a = '', b = ''] = bare;
  const ways = [
    ...(trimmed[0] !== earlier || trimmed[1] !== key ? ['white space around it'] : []),
    ...(dotted[0] !== dotted[1] ? ['a trailing dot'] : []),
    ...(a !== b && (a.toLowerCase() === b.toLowerCase() || a !== a.toLowerCase() || b !== b.toLowerCase())
      ? ['letter case']
      : []),
    ...(a.toLowerCase() !== b.toLowerCase() ? ['punycode'] : []),
  ];
  const last = ways.pop() ?? 'spelling';
  return ways.length ? `differing in ${ways.join(', ')} and ${last}` : `differing only in ${last}`;
}
