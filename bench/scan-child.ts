import { createHash } from 'node:crypto';
import { runScanJob } from '../functions/adapters/scan-job';
import { EnvSecretSource } from '../functions/adapters/secrets';
import { loadScanSettings } from '../functions/core/config';

/**
 * One scan in its own process, so its peak RSS is its own (the simulator lives in the parent).
 * argv: baseUrl apiKey mode concurrency perPage nowIso. Prints one JSON line.
 */
const [baseUrl = '', apiKey = '', mode = 'full', concurrency = '4', perPage = '100', now = ''] =
  process.argv.slice(2);
const settings = loadScanSettings({ resellerBaseUrl: baseUrl, scanMode: mode, concurrency, perPage });
const started = performance.now();
const secrets = new EnvSecretSource({ RESELLER_API_KEY: apiKey });
const report = await runScanJob({ settings, secrets, now: Date.parse(now) });
const wallMs = performance.now() - started;
const keys = report.findings
  .map((f) => `${'domain_name' in f ? f.domain_name : f.handle} ${f.kind} ${f.severity}`)
  .sort()
  .join('\n');
process.stdout.write(
  `${JSON.stringify({
    wallMs,
    requests: report.stats.requests,
    domainsScanned: report.stats.domains_scanned,
    findings: report.findings.length,
    domainFindings: report.findings.filter((f) => 'domain_name' in f).length,
    findingsHash: createHash('sha256').update(keys).digest('hex').slice(0, 16),
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  })}\n`,
);
