import { type Finding, isDomainFinding, type Severity, severityRank } from '../findings/classify';
import type { Problem } from '../reseller/client';
import type { ScanMemory } from './scan-memory';
import type { InGroup, StatefulFinding, StatePolicy } from './state';
import { domainKey } from './state-bounds';

/**
 * Whether a finding is news to its group: without memory, every finding is; with it (the finding
 * marked by compare.ts), one new, escalated or published again by its cadence. An unchanged finding
 * goes in the group's message as context, but never sends it: news of a domain outside the group
 * is none of the group's.
 */
export const isNews = (f: Finding): boolean => {
  const marked = f as Partial<Pick<StatefulFinding, 'change' | 'escalated_after_hours' | 'repeated'>>;
  return (
    marked.change !== 'ongoing' || marked.escalated_after_hours !== undefined || marked.repeated === true
  );
};

/**
 * The severity news is judged at against a level (minSeverity): its own, but a domain back in the
 * account (`returned`, a warning) at that of its departure (`left_account`, critical), so whoever
 * was told it left is told it is back, a group that hears critical news alone too; and a finding
 * memory keeps as the one it remembers (`remembered`, docs/memory.md) at the higher of the two, as
 * the comparison repeats and escalates it: a kept quarantine whose record reads as an info finding
 * is sent to a group that hears critical news alone, as it is to the account.
 */
export const newsLevel = (x: {
  readonly kind?: string;
  readonly severity: Severity;
  readonly remembered?: { readonly severity: Severity };
}): Severity => {
  if (x.kind === 'returned') return 'critical';
  const kept = x.remembered?.severity;
  return kept !== undefined && severityRank(kept) > severityRank(x.severity) ? kept : x.severity;
};

/**
 * The groups with recipients of their own (the policy's `ownRecipients`) whose message the
 * comparison `c` sends, as alerts/groups.ts plans it: news of the group (isNews, a change or
 * resolution of its domains) that reaches the group's level (`worth`), of a finding neither
 * snoozed, acknowledged nor let lapse (`silenced`: the alert leaves those out). That message lists
 * the group's ongoing findings beside its news: their recipients heard of them, so their repeat
 * hours start again, as the account's message starts them for its own (docs/policies.md). A kept
 * quarantine's problem record the account's message announces or repeats (`news`, kept-quarantine.ts
 * keptNews) is news to its group too.
 */
export function groupsHearing(
  c: {
    readonly input: { readonly policy: Pick<StatePolicy, 'ownRecipients'> };
    readonly findings: readonly Finding[];
    readonly report: { readonly problems: readonly { readonly policy?: string; readonly news?: true }[] };
    readonly changes: readonly (InGroup & { readonly severity: Severity })[];
    readonly resolved: readonly (InGroup & { readonly severity: Severity })[];
  },
  worth: (x: InGroup & { readonly severity: Severity }) => boolean,
  silenced: (f: Finding) => boolean,
): ReadonlySet<string> {
  const heard = new Set<string>();
  const own = c.input.policy.ownRecipients;
  if (!own) return heard;
  const hears = (group: string | undefined) => group !== undefined && own.has(group);
  for (const f of c.findings)
    if (isDomainFinding(f) && hears(f.policy) && isNews(f) && worth(f) && !silenced(f))
      heard.add(f.policy as string);
  for (const p of c.report.problems) if (p.news && hears(p.policy)) heard.add(p.policy as string);
  for (const list of [c.changes, c.resolved])
    for (const e of list) if (hears(e.policy) && !e.let_lapse && worth(e)) heard.add(e.policy as string);
  return heard;
}

/**
 * The problems with each new unreadable record (`fresh`, by its index) of a domain in a group memory
 * knows (not let lapse) that says quarantine (critical), given that group (`policy`) and marked
 * `news`, as a record critical by what memory knew is (kept-quarantine.ts keptNews): a group whose
 * domain's record breaks hears it when the account does, not only the account. Its repeats on the
 * critical cadence are the account's alone (it is no finding memory knew to stand for).
 */
export function unreadableGroupNews(
  problems: readonly Problem[],
  memory: ScanMemory,
  lapsing: (group: string | undefined) => boolean,
  fresh: (i: number) => boolean,
): Problem[] {
  return problems.map((p, i) => {
    if (p.news || p.severity !== 'critical' || p.resource !== 'domain' || p.key === null || !fresh(i))
      return p;
    const group = memory.prior.get(domainKey(p.key))?.group;
    if (group === undefined || lapsing(group)) return p;
    return { ...p, policy: group, news: true as const };
  });
}
