/**
 * Runs one real command-line scan in this (child) process and prints its exit status, stderr and
 * peak memory as one JSON line, so a test can bound the scan's RSS without its own heap in the way.
 * Usage: node --import tsx test/support/rss-probe.ts <base-url>   (key in RESELLER_API_KEY)
 */
import { runCli } from './cli';

const [baseUrl] = process.argv.slice(2);
const run = await runCli(['scan', '--json', '--dry-run', '--now', '2026-11-22T06:00:00Z'], {
  RESELLER_BASE_URL: baseUrl,
  RESELLER_API_KEY: process.env.RESELLER_API_KEY,
});
process.stdout.write(
  `${JSON.stringify({
    code: run.code,
    stderr: run.stderr,
    stdoutBytes: run.stdout.length,
    rssBytes: process.memoryUsage().rss,
    // resourceUsage().maxRSS is in kilobytes
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  })}\n`,
);
