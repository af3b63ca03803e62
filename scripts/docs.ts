import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../bin/cli';
import type { Command } from '../bin/command';
import { COMMANDS } from '../bin/commands/index';
import { flagUsage, OTHER_VARIABLES, optionDoc, renderOverview, variablesOf } from '../bin/help';
import { InterruptedError } from '../bin/interrupt';
import { utcDay } from '../functions/core/findings/next-step';
import { NEXT_STEP_TABLE } from '../functions/core/findings/next-step-docs';
import { SECRET_SETTINGS, SETTINGS, type SettingSpec } from '../functions/core/scan/config';
import { generatePortfolio } from '../functions/simulator/portfolio';
import { DeploySettingsSchema } from '../lib/config';
import { costRegions } from './cost-model';

/**
 * `npm run docs`: rewrites the parts of README.md and docs/*.md between `<!-- generated:NAME -->`
 * and `<!-- /generated -->` from the code (the commands in bin/commands/, SETTINGS, the stack's
 * context schema) and from real runs of the command line against the embedded simulator, with a
 * pinned instant, seed and keys so the output is the same on every run. test/docs/generated.test.ts
 * fails when a file differs from what this script writes; test/docs/commands.test.ts runs the
 * files' marked command blocks and compares their output with what is written here.
 */

/** The instant every example is pinned to. */
export const NOW = '2026-11-22T06:00:00Z';
/** Throwaway keys of the try-outs; they guard nothing but a simulator on 127.0.0.1. */
export const TRY_API_KEY = 'try-out-api-key-not-a-secret';
export const TRY_SIGNING_KEY = 'try-out-signing-key-not-a-secret-0123456789';
/** The portfolio of the try-outs' simulator. */
export const SIM = { domains: 500, seed: 1, port: 8080 } as const;
/** The portfolio `demo` (npm start) scans, as `demo`'s defaults say. */
const DEMO = { domains: 60, seed: 7 } as const;
/** Files of the memory try-out, relative to the repository's root (where the docs' commands run). */
const MEMORY_TRY_OUT = { state: '.sentinel/memory.json', alerts: '.sentinel/alerts.txt' } as const;
const SNOOZE_STATE = '.sentinel/state.json';
const SERVE_PORT = 8787;
/** The digest's lines about the registry check: its findings, their next steps, its own section. */
const REGISTRY_FINDING =
  /: (the reseller lists|the registry has|the registry does not know|on hold at the registry)/;
// [ ][ ], not a count: the try-out runs it in awk, and mawk (Debian's, Ubuntu's) knows no {2}.
const REGISTRY_OTHER = /^(REGISTRY CHECK|[ ][ ]Not check|[ ][ ]- \(info\))/;
/** The try-out's filter: each registry finding with its next step, and the check's own lines. */
const REGISTRY_AWK = `awk '/^- /{r=/${REGISTRY_FINDING.source}/} (r && /^(- |  Next: )/) || /${REGISTRY_OTHER.source}/'`;
/** What REGISTRY_AWK keeps of a digest. */
function registryLines(digest: string): string[] {
  let inRegistryFinding = false;
  return digest.split('\n').filter((line) => {
    if (line.startsWith('- ')) inRegistryFinding = REGISTRY_FINDING.test(line);
    return (inRegistryFinding && /^(- | {2}Next: )/.test(line)) || REGISTRY_OTHER.test(line);
  });
}
/** The simulator's faults in the try-out, in the order they hit. */
const FAULTS = '429,500,503,hang,malformed';

/** Context keys of the stack that are not command-line settings, documented here (lib/config.ts validates them). */
const DEPLOY_CONTEXT_DOCS: Readonly<Record<string, string>> = {
  schedule: 'EventBridge Scheduler expression (six cron fields, or `rate(…)`), in `timeZone`',
  scanIntervalHours:
    'dead-man window: the alarm fires when no scan completed in it and an hour more; only widens the schedule’s longest gap, which the synth finds',
  alertEmails: 'e-mail addresses that get the digest',
  alertSmsNumbers: 'E.164 numbers that get the SMS (critical only)',
  opsEmails: 'e-mail addresses that get the alarms about the scan itself',
  secretsKmsKeyArn: 'KMS key of the SecureStrings, to scope decrypt to it',
  scanReservedConcurrency: 'reserved concurrency of the scan function (see docs/deploy.md)',
  scanTimeoutMinutes:
    'the scan function’s timeout in minutes (1 to 15; the scan stops reading 20 s before it, and earlier by its report’s uploads): raise it when a read runs out of time (docs/performance.md)',
  snsFilterPoliciesPerTopic:
    'SNS quota "Filter policies per topic" of the account and region, once raised in Service Quotas; the synth refuses more subscriptions with a filter on the alert topic (docs/accounts.md#limits)',
  alertSubscribersOutsideStack:
    'the alert topic is subscribed outside the stack; without it (and alertEmails, alertSmsNumbers) the synth fails',
  smsSpendAlarmUsd: 'month-to-date SMS spend (USD) that raises the SMS spend alarm (with alertSmsNumbers)',
  ownAccountSettings:
    'this deployment owns API Gateway’s CloudWatch Logs role and SNS’s SMS delivery-status logging of the account and region: it overwrites them, turns on the web API stage’s own logs, and when destroyed clears each that still names its role (docs/deploy.md)',
  webAclArn:
    'a regional AWS WAF web ACL in the stack’s region and account, associated with the web API’s stage: its per-address rate rules keep one address’s flood from getting real clicks answered 429 (docs/security.md)',
  stateTableName:
    'adopt the state table an earlier deployment kept (its output `StateTableName`), so a redeploy remembers what it announced',
  reportBucketName: 'adopt the report bucket an earlier deployment kept (its output `ReportBucketName`)',
  stackName: 'name of the CloudFormation stack (`cdk deploy -c settings=FILE`: keep it in the file)',
  slackWorkspaceId:
    'Slack workspace id (T…) authorised once in Amazon Q Developer in chat applications; with slackChannelId a Slack channel gets each alert (docs/chat.md)',
  slackChannelId: 'Slack channel id (C…) the chat message goes to; with slackWorkspaceId',
  teamsTeamId:
    'Teams team id (a GUID); with teamsTenantId and teamsChannelId a Teams channel gets each alert (docs/chat.md)',
  teamsTenantId: 'Teams tenant id (a GUID) authorised once in Amazon Q Developer in chat applications',
  teamsChannelId: 'Teams channel id from the channel link, URL-encoded (19%3a…%40thread.tacv2)',
  webhooks:
    'webhooks each alert is posted to, `FORMAT:/ssm/parameter` with FORMAT slack, teams or json; each parameter a SecureString holding the URL (docs/chat.md)',
  accounts:
    'the accounts file (docs/accounts.md): several reseller accounts, each with its own key parameter, settings and recipients, scanned by a state machine',
  accountConcurrency:
    'with accounts: accounts scanned at once (the state machine Map’s MaxConcurrency, 1 to 40)',
};
const DEPLOY_CONTEXT_DEFAULTS: Readonly<Record<string, string>> = {
  scanIntervalHours: 'the schedule’s longest gap between two runs, in `timeZone`',
  secretsKmsKeyArn: 'any key, through SSM only',
  scanReservedConcurrency: 'none',
  scanTimeoutMinutes: '5 (15 with registryCheck)',
  opsEmails: 'the deployment’s `alertEmails`',
  snsFilterPoliciesPerTopic: '200, SNS’s default',
  stateTableName: 'a new table',
  reportBucketName: 'a new bucket',
  slackWorkspaceId: 'none: no Slack channel',
  teamsTeamId: 'none: no Teams channel',
  webhooks: 'none',
  accounts: 'one account: `resellerBaseUrl` with `apiKeyParameterName`',
};

const code = (text: string) => `\`${text.replaceAll('|', '\\|')}\``;
const cell = (text: string) => text.replaceAll('|', '\\|');
const table = (head: string[], rows: string[][]) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

/** The options table of one command: flag, meaning (with its default and variable, as its help says). */
export function optionsTable(command: Command): string {
  const rows = Object.keys(command.options).map((flag) => [
    code(flagUsage(flag, command)),
    cell(optionDoc(flag, command)),
  ]);
  return table(['flag', 'meaning'], rows);
}

/** Every command: usage, what it does, its examples, its options and the variables it reads. */
export function cliReference(commands: readonly Command[]): string {
  return commands
    .map((command) => {
      const variables = variablesOf(command);
      return [
        `### \`sentinel ${command.name}${command.args ? ` ${command.args}` : ''}\``,
        '',
        `${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.${command.about ? ` ${command.about}` : ''}`,
        '',
        fence(command.examples.map((e) => `${e.line}   # ${e.says}`).join('\n'), 'sh'),
        '',
        Object.keys(command.options).length ? optionsTable(command) : 'No options.',
        ...(variables.length
          ? ['', `Environment: ${variables.map((v) => `[\`${v}\`](configuration.md)`).join(', ')}.`]
          : []),
      ].join('\n');
    })
    .join('\n\n');
}

/**
 * docs/when-an-alert-arrives.md: one section per finding and change kind, from the table the alerts
 * themselves end each finding with (functions/core/findings/next-step.ts).
 */
export function nextStepSections(): string {
  // As the alerts write them (a deadline with its time), in UTC.
  const day = utcDay;
  const section = (row: (typeof NEXT_STEP_TABLE)[number]) =>
    [
      `### ${row.doc.title} (\`${row.kind}\`)`,
      '',
      `**Severity:** ${row.doc.severity}. **When:** ${row.doc.when}`,
      '',
      `**What the alert says to do** (an example): ${row.line(day)}`,
      '',
      row.doc.how,
    ].join('\n');
  return [
    '## Findings',
    '',
    ...NEXT_STEP_TABLE.filter((r) => r.group === 'finding').map((r) => `${section(r)}\n`),
    '## Changes since the last scan (with a state store)',
    '',
    ...NEXT_STEP_TABLE.filter((r) => r.group === 'change').map((r) => `${section(r)}\n`),
  ]
    .join('\n')
    .trimEnd();
}

/** Environment variables (SETTINGS, SECRET_SETTINGS) and the stack's context keys. */
export function configurationTable(): string {
  const rows: string[][] = [];
  const settings = Object.values(SETTINGS) as SettingSpec[];
  for (const s of settings)
    rows.push([
      code(s.env),
      s.context ? code(s.context) : '',
      cell(s.doc),
      s.default !== undefined ? code(String(s.default)) : 'none',
    ]);
  for (const s of SECRET_SETTINGS)
    rows.push([
      code(s.env),
      'context' in s ? code(s.context) : '',
      cell(s.doc),
      'default' in s ? code(s.default) : 'none',
    ]);
  for (const [name, doc] of Object.entries(OTHER_VARIABLES)) rows.push([code(name), '', cell(doc), 'none']);
  const documented = new Set<string>([
    ...settings.flatMap((s) => (s.context ? [s.context] : [])),
    ...SECRET_SETTINGS.flatMap((s) => ('context' in s ? [s.context] : [])),
  ]);
  for (const key of Object.keys(DeploySettingsSchema.shape)) {
    if (documented.has(key)) continue;
    const doc = DEPLOY_CONTEXT_DOCS[key];
    if (!doc)
      throw new Error(
        `CDK context key ${key} is not documented: add it to DEPLOY_CONTEXT_DOCS in scripts/docs.ts`,
      );
    const parsed = (DeploySettingsSchema.shape as Record<string, import('zod').ZodType>)[key]?.safeParse(
      undefined,
    );
    const d = parsed?.success && parsed.data !== undefined ? JSON.stringify(parsed.data) : undefined;
    rows.push([
      '',
      code(key),
      cell(doc),
      DEPLOY_CONTEXT_DEFAULTS[key] ?? (d && d !== '[]' ? code(String(JSON.parse(d))) : 'none'),
    ]);
  }
  return table(['environment', 'context', 'meaning', 'default'], rows);
}

let scratch: string | undefined;
/** The working directory of the runs below: their own, never the repository a user keeps `.sentinel/` in. */
function workDir(): string {
  if (scratch === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'sentinel-docs-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scratch = dir;
  }
  return scratch;
}

/** Output of one in-process run, stdout and stderr interleaved as a terminal shows them (or stdout alone). */
async function run(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  expectStatus = 0,
  shown: 'both' | 'stdout' = 'both',
) {
  let out = '';
  const status = await main(argv, {
    cwd: workDir(),
    env,
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      if (shown === 'both') out += t;
    },
  });
  if (status !== expectStatus) throw new Error(`sentinel ${argv.join(' ')} exited ${status}: ${out}`);
  return out;
}

/** A long-running command (simulate, serve) started in-process; resolves once it listens. */
async function startServer(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const controller = new AbortController();
  let out = '';
  let listening: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => {
    listening = resolve;
  });
  const done = main(argv, {
    cwd: workDir(),
    env,
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      out += t;
    },
    signal: controller.signal,
    onListening: listening,
  });
  const address = await Promise.race([
    url,
    done.then((s) => Promise.reject(new Error(`exited ${s}: ${out}`))),
  ]);
  return {
    url: address,
    output: () => out,
    /** Stops it as Ctrl-C does; its output stays what it printed while it ran (not the line Ctrl-C adds). */
    async close() {
      const shown = out;
      controller.abort(InterruptedError.of('SIGINT'));
      await done;
      out = shown;
    },
  };
}

/** Where an in-process server listened, replaced by the port the documented command names. */
const atPort = (text: string, url: string, port: number | string) =>
  text.replaceAll(url, `http://127.0.0.1:${port}`);

/**
 * Values that differ from run to run, shown as `<name>` placeholders. This script writes them so; the
 * docs' command test masks both what a file shows and what a command printed before it compares them.
 */
export const VOLATILE = {
  port: [/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>'],
  seconds: [/(\d+ requests?, )\d+\.\d s/g, '$1<seconds> s'],
  messageId: [/published alert [\w-]+ to/g, 'published alert <message-id> to'],
  link: [/exp=\d+&kid=[^&\s]+&sig=[\w-]+/g, 'exp=<exp>&kid=<kid>&sig=<sig>'],
} as const satisfies Record<string, readonly [RegExp, string]>;

/** `text` with the given volatile values (default: all) replaced by their placeholders. */
export function mask(
  text: string,
  names: ReadonlyArray<keyof typeof VOLATILE> = Object.keys(VOLATILE) as never,
) {
  return names.reduce((t, name) => t.replace(VOLATILE[name][0], VOLATILE[name][1]), text);
}

const fence = (body: string, info = '') => `\`\`\`${info}\n${body.replace(/\n+$/, '')}\n\`\`\``;
const output = (body: string, kind = '') => `<!-- readme-output${kind ? ` ${kind}` : ''} -->\n${fence(body)}`;
const runnable = (body: string, background = false) =>
  `<!-- readme-test${background ? ' background' : ''} -->\n${fence(body, 'sh')}`;

/** How the docs run the command line: the package's own bin, as a new user would after `npm ci`. */
const SENTINEL = 'npx sentinel';

/** The generated regions, by name. */
async function generators(): Promise<Record<string, () => string | Promise<string>>> {
  const portfolio = generatePortfolio({ domains: SIM.domains, seed: SIM.seed, now: Date.parse(NOW) });
  const quarantined = portfolio.truth.findings.filter((f) => f.kind === 'quarantine').map((f) => f.key);
  const restoreDomain = quarantined.find((d) => /^[a-z0-9.-]+$/.test(d) && !d.startsWith('xn--')) as string;
  const simEnv = { RESELLER_API_KEY: TRY_API_KEY };
  const simArgs = ['--domains', String(SIM.domains), '--seed', String(SIM.seed), '--now', NOW];
  const simCommand = `${SENTINEL} simulate --port ${SIM.port} ${simArgs.join(' ')}`;
  const exportsFor = (port: number) =>
    `export RESELLER_BASE_URL=http://127.0.0.1:${port} RESELLER_API_KEY=${TRY_API_KEY}`;

  // One simulator for the runs below, as terminal 1 of the try-outs starts it.
  const sim = await startServer(['simulate', '--port', '0', ...simArgs], simEnv);
  const scanEnv = { RESELLER_BASE_URL: sim.url, RESELLER_API_KEY: TRY_API_KEY };
  const report = JSON.parse(await run(['scan', '--json', '--dry-run', '--now', NOW], scanEnv));
  // The registry check against the simulator's registry side: the digest's registry lines.
  const registryArgs = ['--registry-check', '--registry-days', '1'];
  const registryDigest = await run(['scan', '--dry-run', '--now', NOW, ...registryArgs], {
    ...scanEnv,
    RDAP_BOOTSTRAP_URL: `${sim.url}/rdap/dns.json`,
  });

  // Memory on a laptop (before the restore below changes the account): a first scan that delivers to a file and saves the state, a second that stays quiet.
  // The runs keep their files in a folder of their own, shown as .sentinel/: the documents' own
  // commands (test/docs/commands.test.ts) use the real .sentinel/ at the same time.
  const memory = MEMORY_TRY_OUT;
  const memoryArgs = ['scan', '--state', memory.state, '--alert-to', memory.alerts, '--now', NOW];
  const own = mkdtempSync(join(tmpdir(), 'sentinel-docs-'));
  const inOwn = (args: readonly string[]) => args.map((a) => a.replace(/^\.sentinel\//, `${own}/`));
  const shownAsDocumented = (text: string) => text.replaceAll(`${own}/`, '.sentinel/');
  const firstScan = shownAsDocumented(await run(inOwn(memoryArgs), scanEnv));
  const alertHead = readFileSync(join(own, 'alerts.txt'), 'utf8').split('\n').slice(0, 3).join('\n');
  const secondScan = shownAsDocumented(await run(inOwn(memoryArgs), scanEnv));
  const serve = await startServer(['serve', '--port', '0'], {
    ...scanEnv,
    LINK_SIGNING_KEY: TRY_SIGNING_KEY,
  });
  const linkEnv = { ...scanEnv, LINK_SIGNING_KEY: TRY_SIGNING_KEY, LINK_BASE_URL: serve.url };
  const link = (await run(['link', restoreDomain], linkEnv)).trim();
  // What the confirmation page's form sends: the name typed, and the registrant's consent (.nl).
  const confirmation = `confirm_domain=${restoreDomain}&registrant_consent=yes`;
  const restored = await (
    await fetch(link, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: confirmation,
    })
  ).text();
  await serve.close();

  await sim.close();

  // Snooze and acknowledge against the demo's portfolio, on its two expiring warnings, dated by
  // --now at the portfolio's instant as the scan after them is: dated by the real clock they would
  // lie in that scan's future, and a scan never believes a stored time it has not reached.
  const demoPortfolio = generatePortfolio({ domains: DEMO.domains, seed: DEMO.seed, now: Date.parse(NOW) });
  const [snoozed, acknowledged] = demoPortfolio.truth.findings
    .filter((f) => f.kind === 'expiring' && f.severity === 'warning')
    .map((f) => f.key);
  const demoArgs = ['--domains', String(DEMO.domains), '--seed', String(DEMO.seed), '--now', NOW];
  const demoSim = await startServer(['simulate', '--port', '0', ...demoArgs], simEnv);
  const demoEnv = { RESELLER_BASE_URL: demoSim.url, RESELLER_API_KEY: TRY_API_KEY };
  const snoozeArgs = ['snooze', snoozed as string, '--days', '30', '--now', NOW, '--state', SNOOZE_STATE];
  const ackArgs = ['ack', acknowledged as string, '--now', NOW, '--state', SNOOZE_STATE];
  const quietArgs = ['scan', '--state', SNOOZE_STATE, '--dry-run', '--now', NOW];
  const snoozeOut = shownAsDocumented(await run(inOwn(snoozeArgs), demoEnv));
  const ackOut = shownAsDocumented(await run(inOwn(ackArgs), demoEnv));
  const quietHead = (await run(inOwn(quietArgs), demoEnv, 0, 'stdout')).split('\n').slice(0, 3).join('\n');
  rmSync(own, { recursive: true, force: true });
  await demoSim.close();

  // The faults of the try-out: all but `malformed` are retried; a body that is not JSON fails
  // the scan (exit 1) rather than let it report part of the account.
  const faultArgs = ['--max-per-page', '25', '--faults', FAULTS];
  const faulty = await startServer(['simulate', '--port', '0', ...simArgs, ...faultArgs], simEnv);
  const faultScan = await run(
    ['scan', '--dry-run', '--now', NOW, '--timeout-ms', '2000'],
    { RESELLER_BASE_URL: faulty.url, RESELLER_API_KEY: TRY_API_KEY },
    1,
  );
  await faulty.close();

  const demo = await run(['demo', '--now', NOW], { LINK_SIGNING_KEY: TRY_SIGNING_KEY });
  const tryAlerts = await run(['try-alerts', '--now', NOW], {});

  const excerpt = {
    ...report,
    generated_at: '<time>',
    source: { ...report.source, base_url: `http://127.0.0.1:${SIM.port}` },
    stats: { ...report.stats, duration_ms: '<ms>' },
    findings: [
      ...report.findings.slice(0, 2),
      report.findings.find((f: { kind: string }) => f.kind === 'contact_pending_validation'),
    ].filter(Boolean),
    problems: report.problems.slice(0, 1),
  };
  // The excerpt's findings are the report's first two and its first contact finding: keep their order.
  excerpt.findings = report.findings.filter((f: unknown) => excerpt.findings.includes(f));

  const terminal1 = `# terminal 1: the simulator (leave it running; Ctrl-C stops it)\nexport RESELLER_API_KEY=${TRY_API_KEY}\n${simCommand}`;
  return {
    ...costRegions(),
    overview: () => fence(renderOverview(COMMANDS)),
    'cli-reference': () => cliReference(COMMANDS),
    configuration: configurationTable,
    'next-steps': nextStepSections,
    'malformed-count': () => String(portfolio.truth.problems.length),
    'quarantine-count': () => String(quarantined.length),
    'simulate-tryout': () =>
      [
        runnable(terminal1, true),
        output(atPort(sim.output(), sim.url, SIM.port)),
        '',
        runnable(`# terminal 2\n${exportsFor(SIM.port)}\n${SENTINEL} scan --dry-run --now ${NOW}`),
      ].join('\n'),
    'registry-tryout': () =>
      [
        runnable(terminal1.replace('the simulator', 'the simulator, as in the try-outs'), true),
        output(atPort(sim.output(), sim.url, SIM.port)),
        '',
        runnable(
          `# terminal 2: the lines simulate printed, then a scan that checks every domain's registry at once\n${exportsFor(SIM.port)} RDAP_BOOTSTRAP_URL=http://127.0.0.1:${SIM.port}/rdap/dns.json\n${SENTINEL} scan --dry-run --now ${NOW} ${registryArgs.join(' ')} | ${REGISTRY_AWK}`,
        ),
        output(mask(registryLines(registryDigest).join('\n'))),
      ].join('\n'),
    'faults-tryout': () =>
      [
        runnable(
          `# terminal 1\nexport RESELLER_API_KEY=${TRY_API_KEY}\n${simCommand} \\\n  ${faultArgs.join(' ')}`,
          true,
        ),
        '',
        runnable(
          `# terminal 2\n${exportsFor(SIM.port)}\n${SENTINEL} scan --dry-run --now ${NOW} --timeout-ms 2000 || echo "exit status $?"`,
        ),
        // Which page gets the cut body depends on the order the requests arrive in.
        output(`${faultScan.replace(/page \d+/, 'page <n>')}exit status 1`),
      ].join('\n'),
    'json-excerpt': () =>
      [
        runnable(`${SENTINEL} scan --json --dry-run --now ${NOW}`),
        output(JSON.stringify(excerpt, null, 2), 'json-subset'),
      ].join('\n'),
    'json-counts': () =>
      `${report.findings.length} findings and ${report.problems.length} unreadable records (${report.stats.domains_scanned} domains)`,
    demo: () =>
      [
        runnable(`${SENTINEL} demo --now ${NOW}`),
        output(mask(demo.replace(/(simulator on http:\/\/127\.0\.0\.1:)\d+/, '$1<port>'), ['seconds'])),
      ].join('\n'),
    'try-alerts': () => [runnable(`${SENTINEL} try-alerts --now ${NOW}`), output(mask(tryAlerts))].join('\n'),
    'memory-tryout': () =>
      [
        runnable(terminal1.replace('the simulator', 'the simulator, as above'), true),
        '',
        runnable(
          `# terminal 2: start from no memory, scan, and read what was delivered\n${exportsFor(SIM.port)}\nrm -f ${memory.state} ${memory.alerts}\n${SENTINEL} ${memoryArgs.join(' ')}`,
        ),
        output(firstScan),
        '',
        runnable(`head -n 3 ${memory.alerts}`),
        output(alertHead),
        '',
        runnable(
          `# the same scan again: nothing is news, so nothing is delivered\n${SENTINEL} ${memoryArgs.join(' ')}`,
        ),
        output(secondScan),
      ].join('\n'),
    'snooze-tryout': () =>
      [
        runnable(
          `# terminal 1: the simulator with the demo's portfolio\nexport RESELLER_API_KEY=${TRY_API_KEY}\n${SENTINEL} simulate --port ${SIM.port} ${demoArgs.join(' ')}`,
          true,
        ),
        '',
        runnable(
          `# terminal 2\n${exportsFor(SIM.port)}\nrm -f ${SNOOZE_STATE}\n${SENTINEL} ${snoozeArgs.join(' ')}\n${SENTINEL} ${ackArgs.join(' ')}`,
        ),
        output(snoozeOut + ackOut),
        '',
        // sed reads to the end: head would leave while the scan still writes, and the scan would
        // rightly say its output did not arrive whole (EPIPE, exit 1).
        runnable(
          `# the next scan with that state leaves both out of its alert (a dry run: it writes nothing)\n${SENTINEL} ${quietArgs.join(' ')} 2>/dev/null | sed -n 1,3p`,
        ),
        output(quietHead),
      ].join('\n'),
    'restore-tryout': () =>
      [
        runnable(terminal1.replace('the simulator', 'the simulator, as above'), true),
        '',
        runnable(
          `# terminal 2: the restore endpoint, with the simulator's variables and a signing key\n${exportsFor(SIM.port)}\nexport LINK_SIGNING_KEY=${TRY_SIGNING_KEY}\n${SENTINEL} serve --port ${SERVE_PORT}`,
          true,
        ),
        output(
          atPort(serve.output(), serve.url, SERVE_PORT).replace(/\{"message":"restore attempt".*\n/g, ''),
        ),
        '',
        runnable(
          `# terminal 3: a link signed with the same key, then the button's POST\n${exportsFor(SIM.port)}\nexport LINK_SIGNING_KEY=${TRY_SIGNING_KEY} LINK_BASE_URL=http://127.0.0.1:${SERVE_PORT}\n${SENTINEL} link ${restoreDomain}`,
        ),
        output(mask(atPort(link, serve.url, SERVE_PORT), ['link'])),
        '',
        runnable(
          `curl -s -H 'Accept: application/json' -d '${confirmation}' -w '\\n' "$(${SENTINEL} link ${restoreDomain})"`,
        ),
        output(restored),
      ].join('\n'),
  };
}

const REGION = /<!-- generated:([\w-]+) -->([\s\S]*?)<!-- \/generated -->/g;

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every file the docs generation and tests cover: README.md, then docs/*.md, as paths from the root. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

let cached: Promise<Record<string, () => string | Promise<string>>> | undefined;

/** `text` (the file `name`) with every generated region rewritten; throws on a region this script does not know. */
export async function renderDoc(name: string, text: string): Promise<string> {
  cached ??= generators();
  const gen = await cached;
  const names = [...text.matchAll(REGION)].map((m) => m[1] as string);
  const unknown = names.filter((n) => !(n in gen));
  if (unknown.length)
    throw new Error(`${name} has generated regions this script does not know: ${unknown.join(', ')}`);
  const texts = new Map<string, string>();
  for (const region of new Set(names))
    texts.set(region, await (gen[region] as () => string | Promise<string>)());
  return text.replace(REGION, (_all, region: string, old: string) => {
    const body = texts.get(region) as string;
    // A region on its own lines holds a block; one inside a sentence holds a word.
    return old.startsWith('\n')
      ? `<!-- generated:${region} -->\n${body}\n<!-- /generated -->`
      : `<!-- generated:${region} -->${body}<!-- /generated -->`;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const file of docFiles()) {
    const before = readFileSync(join(ROOT, file), 'utf8');
    const after = await renderDoc(file, before);
    if (after !== before) writeFileSync(join(ROOT, file), after);
    process.stdout.write(`${file} ${after === before ? 'was up to date' : 'rewritten'}\n`);
  }
  process.exit(0);
}
