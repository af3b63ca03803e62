import type { DomainFinding } from '../functions/core/findings/classify';
import { renderReportPage } from '../functions/core/pages/report-page';
import { reportOf, urgentFindings } from './feed-section';

/**
 * The report page when its critical and warning findings do not all fit: for each of `sizes` urgent
 * findings, the time to write the page against the time to write a page of only the findings it
 * keeps (measured in the same run, the two taken in turn so a busy machine slows both alike). Only
 * what is written should cost: the ratio should stay near 1 however many findings did not fit (it
 * was about 3 at 100 000 when every item was written first, in full and in brief).
 */
export async function pageSection(sizes: readonly number[], now: string): Promise<void> {
  console.log(
    '\n== the report page with more urgent findings than fit: time against a page of what it keeps ==',
  );
  console.log('urgent findings  kept    page ms  kept-only ms  ratio');
  for (const n of sizes) {
    // Each with its page link, as a scan with a signing key gives them: a whole item shows it.
    const findings = urgentFindings(n, now).map((f) => ({
      ...f,
      actions: { page: `https://abc123.execute-api.eu-west-1.amazonaws.com/prod/finding?d=${f.domain_name}` },
    }));
    const all = reportOf(findings, now);
    const kept = (
      renderReportPage({ report: all, token: {} }).match(/<li class="(?:critical|warning)" data-domain=/g) ??
      []
    ).length;
    const keptOnly = reportOf(all.findings.slice(0, kept) as DomainFinding[], now);
    const [page = 0, keptPage = 1] = inTurn([
      () => renderReportPage({ report: all, token: {} }),
      () => renderReportPage({ report: keptOnly, token: {} }),
    ]);
    console.log(
      [
        String(n).padStart(15),
        String(kept).padEnd(6),
        page.toFixed(0).padStart(8),
        keptPage.toFixed(0).padStart(12),
        (page / keptPage).toFixed(2).padStart(6),
      ].join('  '),
    );
  }
}

/** The median milliseconds of each of `writes`, called in turn seven times after one warm-up round. */
function inTurn(writes: ReadonlyArray<() => string>): number[] {
  const times = writes.map(() => [] as number[]);
  for (let round = 0; round < 8; round++)
    writes.forEach((write, i) => {
      const started = performance.now();
      write();
      if (round > 0) times[i]?.push(performance.now() - started);
    });
  return times.map((t) => t.sort((a, b) => a - b)[3] ?? 0);
}
