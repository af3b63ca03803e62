import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { EnvSecretSource } from '../functions/aws/secrets';
import { chatTargetOf, snsSender } from '../functions/aws/sns-publish';
import { displayDomain } from '../functions/core/base/text';
import { isDomainFinding } from '../functions/core/findings/classify';
import { eventUid } from '../functions/core/pages/calendar';
import { loadScanSettings } from '../functions/core/scan/config';
import type { Report } from '../functions/core/scan/scan';
import { runScheduledStatefulScan } from '../functions/handlers/scheduled-scan';
import { FolderReportStore } from '../functions/local/folder-report-store';
import { deliverAlert } from '../functions/use-cases/publish-alert';
import { finishReport } from '../functions/use-cases/report-finish';
import { runScanJob } from '../functions/use-cases/scan-job';

/**
 * One scan in its own process, so its peak RSS is its own (the simulator and dynalite live
 * elsewhere). argv: baseUrl apiKey mode concurrency perPage nowIso. Prints one JSON line; a scan
 * that fails prints its error instead (a refused filtered read is a result worth showing).
 *
 * `mode` is full, auto or filtered (the scan alone), or, doing what the scan function does with
 * its report (links signed, the alert built, the report stored in BENCH_REPORT_DIR):
 *  - `lambda`: stateless, full mode;
 *  - `stateful`: with its state in the DynamoDB table BENCH_STATE_TABLE at BENCH_DYNAMODB_ENDPOINT.
 * The alert goes through the real SNS client up to the point of sending, where a middleware answers
 * for SNS. Both write `urgent.json` beside the report: every critical and warning domain finding's
 * name (as the page shows it) and calendar UID, for the web check (bench/web-child.ts).
 */
const [baseUrl = '', apiKey = '', mode = 'full', concurrency = '4', perPage = '100', argvNow = ''] =
  process.argv.slice(2);
// BENCH_NOW: the time the scan evaluates, when a section runs scans at other hours (bench/cut-section.ts).
const now = process.env.BENCH_NOW ?? argvNow;
const lambda = mode === 'lambda' || mode === 'stateful';
const reportDir = process.env.BENCH_REPORT_DIR ?? '';
// BENCH_RDAP_BOOTSTRAP (a bootstrap file) turns the registry check on, with BENCH_RDAP_BUDGET queries.
const registry = process.env.BENCH_RDAP_BOOTSTRAP;
const settings = loadScanSettings({
  resellerBaseUrl: baseUrl,
  ...(registry
    ? {
        registryCheck: 'on',
        rdapBootstrapUrl: registry,
        rdapQueryBudget: process.env.BENCH_RDAP_BUDGET,
        registryCheckDays: process.env.BENCH_RDAP_DAYS,
      }
    : {}),
  scanMode: lambda ? 'full' : mode,
  concurrency,
  perPage,
  ...(lambda
    ? {
        linkBaseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod',
        alertTopicArn: 'arn:aws:sns:eu-west-1:123456789012:bench-alerts',
      }
    : {}),
});
const secrets = new EnvSecretSource({ RESELLER_API_KEY: apiKey, LINK_SIGNING_KEY: 'b'.repeat(64) });
const started = performance.now();
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;
// BENCH_TRACE=<ms>: the process's memory on stderr every <ms>, to see which phase of a scan needs it.
if (process.env.BENCH_TRACE) {
  const t = setInterval(() => {
    const m = process.memoryUsage();
    process.stderr.write(
      `${((performance.now() - started) / 1000).toFixed(1)}s rss ${(m.rss / 2 ** 20).toFixed(0)} heap ${(m.heapUsed / 2 ** 20).toFixed(0)}/${(m.heapTotal / 2 ** 20).toFixed(0)} ext ${(m.external / 2 ** 20).toFixed(0)} ab ${(m.arrayBuffers / 2 ** 20).toFixed(0)}\n`,
    );
  }, Number(process.env.BENCH_TRACE));
  t.unref();
}

/** An SNS client that builds and signs nothing past the middleware stack's start: it answers for SNS. */
function answeringSns(): SNSClient {
  const sns = new SNSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'b', secretAccessKey: 'b' } });
  sns.middlewareStack.add(
    () => async () => ({ output: { MessageId: 'bench', $metadata: {} } as never, response: {} }),
    {
      step: 'initialize',
    },
  );
  return sns;
}

/** The first start and last end of each DynamoDB command (ms since the scan began): when it read, when it wrote. */
function timedDynamo(endpoint: string, windows: Record<string, { from: number; to: number; calls: number }>) {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName).replace(/Command$/, '');
      const from = performance.now() - started;
      try {
        return await next(args);
      } finally {
        const w = windows[name] ?? { from, to: 0, calls: 0 };
        windows[name] = w;
        w.to = performance.now() - started;
        w.calls++;
      }
    },
    { step: 'initialize' },
  );
  return client;
}

try {
  // BENCH_TIME_BUDGET_S: the scan's time budget, as the Lambda's timeout less its reserve gives it.
  const budget = Number(process.env.BENCH_TIME_BUDGET_S ?? 0);
  const job = {
    settings,
    secrets,
    now: Date.parse(now),
    ...(budget > 0 ? { deadline: Date.now() + budget * 1000 } : {}),
  };
  let report: Report;
  let extra: Record<string, unknown> = {};
  if (mode === 'stateful') {
    const windows: Record<string, { from: number; to: number; calls: number }> = {};
    const outcome = await runScheduledStatefulScan({
      job,
      tableName: process.env.BENCH_STATE_TABLE ?? '',
      env: {},
      dynamodb: timedDynamo(process.env.BENCH_DYNAMODB_ENDPOINT ?? '', windows),
      sns: answeringSns(),
      clock: () => Date.parse(now) + (performance.now() - started),
    });
    const finished = await finishReport({
      report: outcome.result.report,
      silenced: outcome.result.silenced,
      reports: new FolderReportStore(reportDir),
    });
    report = finished.report;
    extra = { published: outcome.published !== null, saved: outcome.saved, why: outcome.result.why, windows };
  } else if (mode === 'lambda') {
    const finished = await finishReport({
      report: await runScanJob(job),
      reports: new FolderReportStore(reportDir),
    });
    report = finished.report;
    const delivered = await deliverAlert(
      finished.alert,
      { settings, now: job.now },
      { send: snsSender(answeringSns(), settings.alertTopicArn ?? '', chatTargetOf(settings)) },
    );
    extra = { published: delivered.published };
  } else {
    report = await runScanJob(job);
  }
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
  if (lambda) {
    const urgent = report.findings
      .filter(isDomainFinding)
      .filter((f) => f.severity !== 'info')
      .map((f) => ({ name: f.domain_name, shown: displayDomain(f.domain_name), uid: eventUid(f) }));
    writeFileSync(join(reportDir, 'urgent.json'), JSON.stringify(urgent));
    // The last info domain: beyond what the page lists, so only the filter finds it.
    const probe = report.findings.filter(isDomainFinding).findLast((f) => f.severity === 'info');
    extra = {
      ...extra,
      urgent: urgent.length,
      reportUrl: report.report_url,
      calendarUrl: report.calendar_url,
      filterProbe: probe?.domain_name,
      filterProbeShown: probe ? displayDomain(probe.domain_name) : undefined,
    };
  }
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
      incomplete: report.source.incomplete ?? null,
      peakRssMb: scanPeakRssMb,
      ...(report.registry
        ? {
            registry: {
              queries: report.registry.queries,
              requests: report.registry.requests,
              checked: report.registry.checked,
              disagree: report.registry.disagree,
              candidates: report.registry.candidates,
              notChecked: report.registry.not_checked,
              notCheckable: report.registry.not_checkable,
            },
          }
        : {}),
      ...extra,
    })}\n`,
  );
} catch (error) {
  process.stdout.write(
    `${JSON.stringify({ wallMs: performance.now() - started, error: (error as Error).message, peakRssMb: peakRssMb() })}\n`,
  );
}
