import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { EnvSecretSource } from '../functions/aws/secrets';
import { createWebApp } from '../functions/handlers/web-app';
import { WEB_RESOURCES } from '../functions/handlers/web-handler';
import { FolderReportStore } from '../functions/local/folder-report-store';

/**
 * One request to the web function's handler in its own process, so its time and peak RSS are its
 * own: the report page, the calendar feed, or the page with a filter, read from the report a scan
 * stored in `reportDir` (bench/scan-child.ts). argv: reportDir what(page|calendar|filter) url nowIso
 * [filter: the domain to filter for, and the name the page shows for it].
 *
 * Prints one JSON line: the status, the response's size as Lambda counts it (the whole proxy
 * result as JSON: a synchronous answer may be 6 MB), the time to answer, the peak RSS, and for the
 * page and the feed how many of the scan's critical and warning domain findings (urgent.json) are
 * missing from it: in the page by `data-domain` (the name as shown), in the feed by event UID.
 */
const [reportDir = '', what = 'page', url = '', now = ''] = process.argv.slice(2);
const link = new URL(url);
const query: Record<string, string> = Object.fromEntries(link.searchParams);
const urgent = JSON.parse(readFileSync(join(reportDir, 'urgent.json'), 'utf8')) as Array<{
  name: string;
  shown: string;
  uid: string;
}>;
// An info domain the view does not list: only the filter, reading the whole report, finds it.
if (what === 'filter') query.q = process.argv[6] ?? '';
const app = createWebApp({
  settings: () => ({}),
  secrets: new EnvSecretSource({ LINK_SIGNING_KEY: 'b'.repeat(64) }),
  actions: () => null,
  reports: () => new FolderReportStore(reportDir),
  log: () => {},
  clock: () => Date.parse(now) + 3_600_000,
});
const started = performance.now();
const result = await app({
  resource: what === 'calendar' ? WEB_RESOURCES.calendar : WEB_RESOURCES.report,
  httpMethod: 'GET',
  path: link.pathname,
  queryStringParameters: query,
  headers: {},
  requestContext: { identity: { sourceIp: '127.0.0.1' } },
} as unknown as APIGatewayProxyEvent);
const ms = performance.now() - started;
const peakRssMb = process.resourceUsage().maxRSS / 1024;
const body = result.body;
let missing: number | null = null;
let missingExample: string | null = null;
if (what === 'page') {
  // escapeHtml writes &, <, >, quotes and backticks as numeric references.
  const shown = new Set(
    Array.from(body.matchAll(/data-domain="([^"]*)"/g), (m) =>
      m[1]?.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))),
    ),
  );
  const absent = urgent.filter((u) => !shown.has(u.shown));
  missing = absent.length;
  missingExample = absent[0]?.name ?? null;
} else if (what === 'calendar') {
  const uids = new Set(
    Array.from(body.replace(/\r\n[ \t]/g, '').matchAll(/^UID:(.*)$/gm), (m) => m[1]?.replace(/\r$/, '')),
  );
  const absent = urgent.filter((u) => !uids.has(u.uid));
  missing = absent.length;
  missingExample = absent[0]?.name ?? null;
}
process.stdout.write(
  `${JSON.stringify({
    status: result.statusCode,
    lambdaBytes: Buffer.byteLength(JSON.stringify(result)),
    bodyBytes: Buffer.byteLength(body),
    ms,
    peakRssMb,
    urgent: urgent.length,
    missing,
    missingExample,
    matched: what === 'filter' ? body.includes(`data-domain="${process.argv[7] ?? query.q}"`) : null,
  })}\n`,
);
