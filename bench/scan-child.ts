import { createHash } from 'node:crypto';
import { runScanJob } from '../functions/adapters/scan-job';
import { EnvSecretSource } from '../functions/adapters/secrets';
import { loadScanSettings } from '../functions/core/config';

/**
 * One scan in its own process, so its peak RSS is its own (the simulator lives in the parent).
 * argv: baseUrl apiKey mode concurrency perPage nowIso. Prints one JSON line; a scan that fails
 * prints its error instead (a refused filtered read is a result worth showing, not a crash).
 */
const [baseUrl = '', apiKey = '', mode = 'full', concurrency = '4', perPage = '100', now = ''] =
  process.argv.slice(2);
const settings = loadScanSettings({ resellerBaseUrl: baseUrl, scanMode: mode, concurrency, perPage });
const started = performance.now();
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;
try {
  const report = await runScanJob({
    settings,
    secrets: new EnvSecretSource({ RESELLER_API_KEY: apiKey }),
    now: Date.parse(now),
  });
  const wallMs = performance.now() - started;
  // The scan's peak, before this process builds its own comparison keys below.
  const scanPeakRssMb = peakRssMb();
  const keys = report.findings
    .map((f) => `${'domain_name' in f ? f.domain_name : f.handle} ${f.kind} ${f.severity}`)
    .sort()
    .join('\n');
  const problems = report.problems
    .map((p) => `${p.resource} ${p.key} ${p.reason}`)
    .sort()
    .join('\n');
  process.stdout.write(
    `${JSON.stringify({
      wallMs,
      requests: report.stats.requests,
      domainsScanned: report.stats.domains_scanned,
      findings: report.findings.length,
      domainFindings: report.findings.filter((f) => 'domain_name' in f).length,
      problems: report.problems.length,
      findingsHash: createHash('sha256')
        .update(keys)
        .update('\0')
        .update(problems)
        .digest('hex')
        .slice(0, 16),
      read: report.source.read,
      fallbackReason: report.source.fallback_reason ?? null,
      peakRssMb: scanPeakRssMb,
    })}\n`,
  );
} catch (error) {
  process.stdout.write(
    `${JSON.stringify({ wallMs: performance.now() - started, error: (error as Error).message, peakRssMb: peakRssMb() })}\n`,
  );
}
