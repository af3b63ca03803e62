/**
 * Runs one real command line (argv after the script: the CLI's arguments, environment from this
 * process) in this child process and prints its exit status, its output (stdout up to 1 MB, the
 * end of stderr) and its memory as one JSON line, so a test can bound a scan's heap without its own
 * heap in the way. Start it with `--max-old-space-size=N` to make the bound hard: a scan whose live
 * objects outgrow it dies with "heap out of memory" instead of finishing.
 * Usage: node --max-old-space-size=N --import tsx test/support/heap-probe.ts scan --state …
 */
import { getHeapStatistics } from 'node:v8';
import { runCli } from './cli';

let peakHeapBytes = 0;
const sample = () => {
  peakHeapBytes = Math.max(peakHeapBytes, getHeapStatistics().used_heap_size);
};
const sampler = setInterval(sample, 5);
const run = await runCli(process.argv.slice(2), process.env);
clearInterval(sampler);
sample();
process.stdout.write(
  `${JSON.stringify({
    code: run.code,
    stderr: run.stderr.slice(-2_000),
    stdout: run.stdout.slice(0, 1_000_000),
    stdoutBytes: run.stdout.length,
    // Sampled: live objects and garbage not yet collected; never above the limit for long.
    peakHeapBytes,
    heapLimitBytes: getHeapStatistics().heap_size_limit,
    // resourceUsage().maxRSS is in kilobytes
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  })}\n`,
);
