/** What memory adds to a problem record it publishes as a kept quarantine (memory/kept-quarantine.ts). */
export interface KeptQuarantineMarks {
  /** Its remembered restore-by, null unknown; quiet hours judge by it. */
  readonly restore_by?: string | null;
  /** Its group (the policy memory last read it under), as a finding's `policy`. */
  readonly policy?: string;
  /** Published again because nobody acted on it, after this many hours (memory/escalation.ts), as a finding's. */
  readonly escalated_after_hours?: number;
  /** The account's message announces or repeats it now: news to its group too (alerts/groups.ts). */
  readonly news?: true;
}
