import { EnvSecretSource } from '../functions/aws/secrets';
import { SNS_MAX_BYTES } from '../functions/core/alerts/alert';
import { buildAlertMessage, snsPublishBytes } from '../functions/core/alerts/message';
import { loadScanSettings } from '../functions/core/scan/config';
import { generatePortfolio, type PortfolioProfile } from '../functions/simulator/portfolio';
import { startSimulator } from '../functions/simulator/server';
import { runScanJob } from '../functions/use-cases/scan-job';

/**
 * The alert at size: for each account size and portfolio, one stateless scan with links (as the
 * Lambda signs them, API Gateway's base URL), then the one SNS message. Prints what SNS counts
 * (message, subject, attributes) against its 256 KB, how many critical and warning findings the
 * e-mail names of how many, whether the JSON is whole or linked (claim check), and the message's
 * build time as a share of the scan it follows (a ratio within the run).
 */
export async function alertSection(sizes: readonly number[], now: string, key: string): Promise<void> {
  console.log('\n== the alert at size: what SNS counts, what the e-mail names, whether the JSON is whole ==');
  console.log(
    'domains  portfolio  bytes (of 262144)  critical named  warning named  JSON    findings in JSON  build / scan',
  );
  for (const domains of sizes)
    for (const profile of ['realistic', 'stress'] as const) await one(domains, profile, now, key);
}

async function one(domains: number, profile: PortfolioProfile, now: string, key: string) {
  const portfolio = generatePortfolio({ domains, profile, now: Date.parse(now) });
  const sim = await startSimulator({ portfolio, apiKey: key });
  try {
    const settings = loadScanSettings({
      resellerBaseUrl: sim.url,
      scanMode: 'full',
      linkBaseUrl: 'https://abc123defg.execute-api.eu-west-1.amazonaws.com/prod',
    });
    const secrets = new EnvSecretSource({ RESELLER_API_KEY: key, LINK_SIGNING_KEY: 'b'.repeat(64) });
    const scanStarted = performance.now();
    const report = await runScanJob({ settings, secrets, now: Date.parse(now) });
    const scanMs = performance.now() - scanStarted;
    const started = performance.now();
    const alert = buildAlertMessage(report);
    const buildMs = performance.now() - started;
    const bytes = snsPublishBytes(alert);
    const critical = alert.attributes.critical_count;
    const warning = alert.attributes.warning_count;
    const { named } = alert.digest;
    console.log(
      [
        String(domains).padStart(7),
        profile.padEnd(9),
        `${bytes}${bytes > SNS_MAX_BYTES ? ' OVER' : ''}`.padEnd(17),
        `${named.critical} of ${critical}`.padEnd(14),
        `${named.warning} of ${warning}`.padEnd(14),
        alert.json.padEnd(7),
        `${report.findings.length - alert.findingsCut} of ${report.findings.length}`.padEnd(17),
        `${buildMs.toFixed(0)} ms / ${scanMs.toFixed(0)} ms (${((100 * buildMs) / scanMs).toFixed(1)}%)`,
      ].join('  '),
    );
  } finally {
    await sim.close();
  }
}
