import type { DomainFinding } from '../functions/core/findings/classify';
import { renderCalendar } from '../functions/core/pages/calendar';
import type { Report } from '../functions/core/scan/scan';

/**
 * The calendar feed when its critical and warning events do not all fit: for each of `sizes` urgent
 * events, the time to write the feed against the time to write a feed of only the events it keeps
 * (measured in the same run). Only what is written should cost: the ratio should stay near 1 however
 * many events did not fit (it was 3 to 5 at 100 000 when every event was written first).
 */
export async function feedSection(sizes: readonly number[], now: string): Promise<void> {
  console.log(
    '\n== the calendar feed with more urgent events than fit: time against a feed of what it keeps ==',
  );
  console.log('urgent events  kept    feed ms  kept-only ms  ratio');
  for (const n of sizes) {
    const all = reportOf(urgentFindings(n, now), now);
    const feed = median(() => renderCalendar(all));
    const kept = (feed.out.match(/^BEGIN:VEVENT\r$/gm) ?? []).length;
    const keptOnly = median(() =>
      renderCalendar(reportOf(all.findings.slice(0, kept) as DomainFinding[], now)),
    );
    console.log(
      [
        String(n).padStart(13),
        String(kept).padEnd(6),
        feed.ms.toFixed(0).padStart(8),
        keptOnly.ms.toFixed(0).padStart(12),
        (feed.ms / keptOnly.ms).toFixed(2).padStart(6),
      ].join('  '),
    );
  }
}

function median(write: () => string): { ms: number; out: string } {
  const times: number[] = [];
  let out = '';
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    out = write();
    times.push(performance.now() - started);
  }
  return { ms: times.sort((a, b) => a - b)[2] ?? 0, out };
}

/** `n` expiring findings without auto-renew, 1 to 60 days out: the first 7 days critical, the rest warning. */
export function urgentFindings(n: number, now: string): DomainFinding[] {
  const day = 86_400_000;
  return Array.from({ length: n }, (_, i) => {
    const days = (i % 60) + 1;
    return {
      domain_name: `urgent-${i}.nl`,
      kind: 'expiring',
      severity: days <= 7 ? 'critical' : 'warning',
      date_expiry: new Date(Date.parse(now) + days * day).toISOString(),
      days_left: days,
      auto_renew: false,
      registrant: { handle: 'C1', name: 'Anna de Vries', company_name: 'Bloem BV', email: 'anna@example.nl' },
    } as DomainFinding;
  });
}

/** A full report of `findings`, made at `now`. */
export function reportOf(findings: readonly DomainFinding[], now: string): Report {
  return {
    generated_at: now,
    now,
    source: { base_url: 'https://api.example.test', mode: 'full', read: 'full' },
    policy: { expiry_days: 60, critical_days: 7 },
    stats: { domains_scanned: findings.length, contacts_scanned: 0, requests: 0, duration_ms: 0 },
    summary: { critical: 0, warning: findings.length, info: 0 },
    findings: [...findings],
    problems: [],
  } as Report;
}
