/** What the scan and memory mark on a problem record, as data, not words of its reason: how it was judged, and what memory publishes it as (memory/kept-quarantine.ts). */
export interface KeptQuarantineMarks {
  /**
   * Read, classified by its dates only: its status is not one the API documents (scan/scan-problems.ts
   * undocumentedStatusProblem), so what it says cannot resolve what memory knew.
   */
  readonly dates_only?: true;
  /**
   * Read and checked, its registrant handle given twice and the two disagreeing (scan/scan-problems.ts
   * registrantConflictProblem): a record to look at, not one that could not be read.
   */
  readonly registrant_conflict?: true;
  /**
   * Published by memory as a quarantine it keeps while this record gives no finding (memory/kept-quarantine.ts):
   * critical, or at the record's own severity while a snooze of it holds.
   */
  readonly kept_quarantine?: true;
  /**
   * The critical finding memory last knew of a domain whose record could not be read, or read by its
   * dates only gives none (memory/kept-quarantine.ts): published critical by it, said as what it
   * was (`expired`), or as memory infers it now (`expired` once an `expiring` one's remembered
   * expiry has passed, {@link remembered_expiry}). Its record's own severity is none: its problem key
   * stays the record's.
   */
  readonly remembered_kind?: string;
  /**
   * The expiry memory last read of a domain it knew as `expiring`, once that expiry has passed: its
   * `remembered_kind` is then `expired`, inferred from that date, not read (memory/kept-quarantine.ts).
   */
  readonly remembered_expiry?: string;
  /** Its remembered restore-by, null unknown; quiet hours judge by it. */
  readonly restore_by?: string | null;
  /** Its group (the policy memory last read it under), as a finding's `policy`. */
  readonly policy?: string;
  /** Published again because nobody acted on it, after this many hours (memory/escalation.ts), as a finding's. */
  readonly escalated_after_hours?: number;
  /** The account's message announces or repeats it now: news to its group too (alerts/groups.ts). */
  readonly news?: true;
}
