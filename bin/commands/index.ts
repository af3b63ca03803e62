import { DEFAULT_SNOOZE_DAYS, MAX_SNOOZE_DAYS } from '../../functions/core/memory/actions';
import { REPORT_ENV } from '../../functions/core/memory/report-store';
import { ENV } from '../../functions/core/scan/config';
import {
  BASE_URL_OPTION,
  type Command,
  fromSetting,
  portOption,
  STATE_OPTION,
  switchFromSetting,
} from '../command';

/**
 * Every command of `sentinel`, declared here in the order help and the CLI reference list them:
 * its name, flags, environment and examples, which `--help`, the parser and docs/cli.md read. What a
 * command does is the module beside this file of its name (scan.ts, serve.ts, …), bound to its
 * declaration in runs.ts and imported only when that command runs: `sentinel --help` and
 * `sentinel scan --help` load none of them (the AWS SDK, the simulator, the web app), so they
 * answer at once. A new command is one declaration here, one module beside it exporting its run
 * function, and one line in runs.ts.
 */

/** Accounts of an accounts file scanned at once by default. */
export const DEFAULT_ACCOUNT_CONCURRENCY = 4;
/** Where `serve` listens and `link` points by default. */
export const LOCAL_LINK_PORT = 8787;
export const LOCAL_LINK_URL = `http://127.0.0.1:${LOCAL_LINK_PORT}`;

/** `--accounts FILE`, as scan and every command that takes a state take it. */
const ACCOUNTS_FILE_OPTION = { type: 'string', value: 'FILE' } as const;
/** `--account NAME`, an account of `--accounts FILE`. */
const ACCOUNT_NAME_OPTION = { type: 'string', value: 'NAME' } as const;

/**
 * `--account NAME --accounts FILE` of every command that takes a state (state, restore, audit,
 * snooze, ack): it acts for that account as `scan --accounts FILE --account NAME` scans it.
 * `--accounts` comes first, as in scan: a slip of it (`--accountx`) is as near to both names, and
 * the suggestion is the first declared.
 */
const ACCOUNT_OPTIONS = {
  accounts: {
    ...ACCOUNTS_FILE_OPTION,
    doc: 'with --account: the accounts file (docs/accounts.md) that names the account',
  },
  account: {
    ...ACCOUNT_NAME_OPTION,
    doc: 'act for this account of --accounts FILE, as scan --accounts scans it: in its own state (its file beside the state file named, or its scope of the table named), with its own key (apiKeyEnv) and settings',
    default: 'the account of RESELLER_API_KEY',
  },
} as const;

export const scan: Command = {
  name: 'scan',
  summary: 'one scan of the account: report, digest, alert',
  about:
    'Reads the whole account (or the part a proven filtered read needs), classifies every domain and ' +
    'delivers one alert: to the SNS topic, to stdout or a file (--alert-to), or nowhere (--dry-run). ' +
    'With --state it remembers the last scan and alerts only on news.',
  options: {
    json: { type: 'boolean', doc: 'print only the JSON report on stdout' },
    'dry-run': {
      type: 'boolean',
      doc: `print the digest and SMS instead of publishing, and write no state (publishing needs ${ENV.alertTopicArn})`,
    },
    chat: {
      type: 'boolean',
      doc: 'with --dry-run: print the chat message (the Amazon Q Developer custom-notification JSON that CHAT_TOPIC_ARN would get) instead of the digest and SMS',
    },
    webhook: {
      type: 'string',
      value: 'URL',
      secret: true,
      doc: `post the alert to this webhook instead of SNS, in --webhook-format (or set ${ENV.webhookUrl}: a URL on the command line is seen by other users of this machine); it counts as delivered, so --state is saved`,
    },
    'webhook-format': fromSetting('webhookFormat', 'slack|teams|json'),
    'alert-to': {
      type: 'string',
      value: 'stdout|FILE',
      doc: 'deliver the alert here instead of SNS: printed (the lines of the scan itself then go to stderr), or appended to FILE; once written whole it counts as delivered, so --state is saved (a write that fails, a reader that went away, fails the run and saves nothing)',
      default: 'the SNS topic',
    },
    now: {
      type: 'string',
      value: 'ISO',
      doc: 'evaluate the rules at this instant (reproducible runs)',
      default: 'now',
    },
    'expiry-days': fromSetting('expiryDays', 'N'),
    'critical-days': fromSetting('criticalDays', 'N'),
    mode: fromSetting('scanMode', 'MODE'),
    'per-page': fromSetting('perPage', 'N'),
    concurrency: fromSetting('concurrency', 'N'),
    'timeout-ms': fromSetting('requestTimeoutMs', 'MS'),
    'time-budget': fromSetting('timeBudgetSeconds', 'S'),
    'max-response-mb': fromSetting('maxResponseMb', 'N'),
    'min-severity': fromSetting('minSeverity', 'LEVEL'),
    'registry-check': switchFromSetting('registryCheck'),
    'rdap-bootstrap': fromSetting('rdapBootstrapUrl', 'URL|FILE'),
    'rdap-budget': fromSetting('rdapQueryBudget', 'N'),
    'registry-days': fromSetting('registryCheckDays', 'N'),
    'registry-tolerance-days': fromSetting('registryToleranceDays', 'N'),
    'rdap-timeout-ms': fromSetting('rdapTimeoutMs', 'MS'),
    'time-zone': fromSetting('timeZone', 'TZ'),
    policies: fromSetting('policiesFile', 'FILE'),
    'sms-quiet-hours': fromSetting('smsQuietHours', 'HH:MM-HH:MM'),
    'heartbeat-url': {
      type: 'string',
      value: 'URL',
      secret: true,
      doc: `GET this URL after every complete scan and URL/fail after a failed one (Healthchecks.io, Cronitor; with --accounts URL/<account>); not on --dry-run; a failed ping is said on stderr and changes nothing else (or set ${ENV.heartbeatUrl}: a URL on the command line is seen by other users of this machine)`,
    },
    'base-url': BASE_URL_OPTION,
    state: STATE_OPTION,
    'allow-clock-skew': {
      type: 'boolean',
      doc: "with --state: scan even when --now is more than 5 minutes ahead of this machine's clock or before the state's last scan (a replay, or a clock that was wrong); stored times in the future then count as due",
    },
    'fail-on': {
      type: 'string',
      value: 'LEVEL',
      doc: 'exit 3 when a finding, an unreadable record or (with --state) a change is at info, warning or critical or above',
      default: 'off',
    },
    accounts: {
      ...ACCOUNTS_FILE_OPTION,
      doc: 'scan every account of this accounts file (docs/accounts.md), each with its own key, state, report and alert; exit 1 once all were tried if any could not be read',
      default: 'one account',
    },
    account: {
      ...ACCOUNT_NAME_OPTION,
      doc: 'with --accounts: scan only the account of this name',
      default: 'every account',
    },
    'account-concurrency': {
      type: 'string',
      value: 'N',
      doc: 'with --accounts: accounts scanned at once, each at its own reseller’s pace',
      default: String(DEFAULT_ACCOUNT_CONCURRENCY),
    },
  },
  env: [
    ENV.resellerApiKey,
    ENV.alertTopicArn,
    ENV.chatTopicArn,
    ENV.webhookUrl,
    ENV.webhookSigningKey,
    ENV.linkBaseUrl,
    ENV.linkSigningKey,
    ENV.linkTtlDays,
    ENV.accountLabel,
    ENV.alertThresholds,
    ENV.criticalRepeatHours,
    ENV.summaryEveryDays,
    ENV.quarantineDays,
    ENV.policies,
    ENV.heartbeatUrl,
    ENV.heldSmsScheduleGroup,
    ENV.heldSmsRoleArn,
    REPORT_ENV.dir,
    REPORT_ENV.bucket,
  ],
  examples: [
    {
      line: 'sentinel scan --dry-run',
      says: 'the digest and the SMS text; nothing published, no state written',
    },
    { line: 'sentinel scan --json --dry-run > report.json', says: 'only the JSON report, on stdout' },
    {
      line: 'sentinel scan --state .sentinel/state.json --alert-to stdout',
      says: 'with memory: a second run says only what is news',
    },
    {
      line: 'sentinel scan --fail-on critical --dry-run',
      says: 'exit 3 when something is critical (for cron or CI)',
    },
    { line: 'sentinel scan --accounts accounts.json --dry-run', says: 'every account of an accounts file' },
  ],
};

export const state: Command = {
  name: 'state',
  args: '<init|reset|rebind> <PATH|dynamodb:TABLE>',
  summary: 'init: create the state table; reset: forget the state; rebind: keep it for a new key',
  about:
    'init creates a DynamoDB state table with the stack’s own definition (for a local one: AWS_ENDPOINT_URL_DYNAMODB, AWS_REGION and any credentials); ' +
    'reset removes a state file, or deletes this account’s items (the partition of the reseller base URL) from a table; ' +
    `rebind binds the state to the account of ${ENV.resellerApiKey} after that key was rotated, keeping its memory ` +
    '(a state is refused by a key of another account). With --account NAME --accounts FILE, reset and rebind act on ' +
    'that account’s state (as scan --accounts keeps it) and rebind binds it to the key in the account’s apiKeyEnv; ' +
    'a refused scan names the exact command.',
  options: {
    yes: { type: 'boolean', doc: 'confirm reset or rebind' },
    'base-url': {
      ...BASE_URL_OPTION,
      doc: 'the account whose state reset forgets in a table, or rebind binds (the scans’ base URL)',
    },
    ...ACCOUNT_OPTIONS,
  },
  env: [ENV.resellerApiKey],
  examples: [
    {
      line: 'sentinel state init dynamodb:sentinel-state',
      says: 'a local state table (with AWS_ENDPOINT_URL_DYNAMODB and AWS_REGION set)',
    },
    {
      line: 'sentinel state reset .sentinel/state.json --yes',
      says: 'forget everything: the next scan is a first run',
    },
    {
      line: 'sentinel state rebind .sentinel/state.json --yes',
      says: 'keep the memory after RESELLER_API_KEY was rotated',
    },
    {
      line: 'sentinel state rebind .sentinel/state.json --account brand-a --accounts accounts.json --yes',
      says: 'the same for account brand-a, after the key in its apiKeyEnv was rotated',
    },
  ],
};

export const simulate: Command = {
  name: 'simulate',
  summary: 'the embedded reseller simulator, until Ctrl-C',
  about:
    'A real HTTP server on 127.0.0.1 with the documented endpoints, Bearer auth, search, paging and restore, ' +
    'serving a generated portfolio, and a registry side: RDAP servers for its TLDs and their bootstrap, for ' +
    'scan --registry-check (docs/registry.md). It prints the lines to paste into the terminal you scan from; ' +
    `without ${ENV.resellerApiKey} in its environment it makes up a key and prints it.`,
  options: {
    port: portOption('8080'),
    domains: { type: 'string', value: 'N', doc: 'domains in the portfolio', default: '500' },
    portfolio: {
      type: 'string',
      value: 'PROFILE',
      doc: 'realistic (about 14 % of domains flagged) or stress (about 42 %, and dates no search can select)',
      default: 'realistic',
    },
    seed: {
      type: 'string',
      value: 'S',
      doc: 'portfolio seed: the same seed, the same portfolio',
      default: '1',
    },
    now: {
      type: 'string',
      value: 'ISO',
      doc: 'lay the portfolio out around this instant (pin it, with scan --now, for the same findings every day)',
      default: 'now',
    },
    latency: {
      type: 'string',
      value: 'MS',
      doc: 'every answer leaves this long after its request arrived',
      default: '0',
    },
    'max-per-page': { type: 'string', value: 'N', doc: 'the server caps per_page here', default: '100' },
    faults: {
      type: 'string',
      value: 'LIST',
      doc: 'faults for the next domain-list requests after page 1, in order: 429 (Retry-After: 1), 500, 503, hang, malformed (a cut JSON body)',
      default: 'none',
    },
    'rate-limit': {
      type: 'string',
      value: 'RPS',
      doc: 'answer 429 with Retry-After beyond this many requests a second (a token bucket)',
      default: 'none',
    },
    'search-semantics': {
      type: 'string',
      value: 'HOW',
      doc: 'how repeated search parameters combine: or, and, or ignore (search parameters are ignored)',
      default: 'or',
    },
    accounts: {
      type: 'string',
      value: 'FILE',
      doc: 'serve one account per account of this accounts file (docs/accounts.md), each its own portfolio (seed S+1, S+2, …) and key: the one its apiKeyEnv holds, else one made up and printed as an export of that variable',
      default: 'one account',
    },
  },
  env: [ENV.resellerApiKey],
  examples: [
    { line: 'sentinel simulate', says: 'on 127.0.0.1:8080; prints the two exports to paste' },
    { line: 'sentinel simulate --domains 100000 --latency 50', says: 'a large, slow account' },
    { line: 'sentinel simulate --max-per-page 25 --faults 429,500,hang', says: 'a reseller that misbehaves' },
  ],
};

export const demo: Command = {
  name: 'demo',
  summary: 'the simulator and a dry-run scan of it (npm start); in a terminal, serves its links',
  about:
    'Starts the simulator with a small portfolio, runs `scan --dry-run` against it with links signed by a ' +
    'throwaway key, and, when its output is a terminal, keeps serving those links (as `serve` does) until Ctrl-C.',
  options: {
    domains: { type: 'string', value: 'N', doc: 'domains in the portfolio', default: '60' },
    seed: { type: 'string', value: 'S', doc: 'portfolio seed', default: '7' },
    now: {
      type: 'string',
      value: 'ISO',
      doc: 'lay the portfolio out and scan at this instant (the same output every day)',
      default: 'now',
    },
  },
  examples: [
    { line: 'sentinel demo', says: 'what npm start runs' },
    {
      line: 'sentinel demo --now 2026-11-22T06:00:00Z',
      says: 'the README’s output, but for the port, the seconds and the links (a new throwaway key each run)',
    },
  ],
};

export const tryAlerts: Command = {
  name: 'try-alerts',
  summary: 'the alert path end to end through an SNS/SQS emulator, without AWS',
  about:
    'Starts an SNS/SQS emulator (fauxqs) on 127.0.0.1 with a topic and two queues (one unfiltered, one with ' +
    'the SMS filter severity = critical), the simulator, and one real scan publishing through the AWS SDK; ' +
    'then prints what each queue received. With --webhook-format, a third queue feeds the webhook subscriber ' +
    '(the Lambda handler), which posts to a receiver on 127.0.0.1 that prints what arrived.',
  options: {
    'webhook-format': {
      type: 'string',
      value: 'slack|teams|json',
      doc: 'also run the webhook subscriber on its own queue, posting in this format to a local receiver',
      default: 'none',
    },
    domains: { type: 'string', value: 'N', doc: 'domains in the portfolio', default: '60' },
    seed: { type: 'string', value: 'S', doc: 'portfolio seed', default: '7' },
    now: {
      type: 'string',
      value: 'ISO',
      doc: 'lay the portfolio out and scan at this instant',
      default: 'now',
    },
  },
  examples: [
    { line: 'sentinel try-alerts', says: 'what each kind of subscriber would receive' },
    { line: 'sentinel try-alerts --webhook-format slack', says: 'and the body a Slack webhook gets' },
  ],
};

export const serve: Command = {
  name: 'serve',
  summary: 'every link (finding, restore, snooze, acknowledge, report, calendar) on a local server',
  about:
    'Serves /finding/<domain>, /restore/<domain>, /snooze/<domain>, /acknowledge/<domain>, /report, /report.json and /calendar.ics through ' +
    `the web Lambda’s own handler. It reads the report where scan keeps it (${REPORT_ENV.dir}, else beside ` +
    'the state file, else .sentinel/reports), and keeps snoozes and the audit trail of restores in the state ' +
    'store (--state or STATE).',
  options: {
    port: portOption(String(LOCAL_LINK_PORT)),
    'base-url': BASE_URL_OPTION,
    state: {
      ...STATE_OPTION,
      doc: 'the state store the scans use (a JSON file PATH, or dynamodb:TABLE): the snooze and acknowledge links write into it, and restores into its audit trail',
    },
    accounts: {
      type: 'string',
      value: 'FILE',
      doc: 'serve every account of this accounts file instead: its links under /accounts/<name>/, each with its own key (apiKeyEnv), state and report, and the overview at /accounts; the deployment’s own routes answer 410, as the web function of a deployment of accounts does',
      default: 'one account',
    },
  },
  env: [ENV.resellerApiKey, ENV.linkSigningKey, REPORT_ENV.dir, REPORT_ENV.bucket],
  examples: [
    { line: 'sentinel serve', says: `on ${LOCAL_LINK_URL}, where scan’s links point by default` },
    {
      line: 'sentinel serve --state .sentinel/state.json',
      says: 'snooze and acknowledge into the scans’ memory',
    },
  ],
};

export const link: Command = {
  name: 'link',
  args: '<domain>',
  summary: 'print a signed restore link for a domain',
  about:
    `The link points at ${ENV.linkBaseUrl}, or at serve's default address when it is not set, and is signed with the first key of ${ENV.linkSigningKey}. ` +
    'A deployment of several accounts (and serve --accounts) answers those links 410: give --account NAME --accounts FILE for the link of that account, as its alerts carry it.',
  options: {
    'ttl-days': fromSetting('linkTtlDays', 'N'),
    accounts: {
      ...ACCOUNTS_FILE_OPTION,
      doc: 'with --account: the accounts file (docs/accounts.md) that names the account',
    },
    account: {
      ...ACCOUNT_NAME_OPTION,
      doc: `the link of this account of --accounts FILE, as its alerts carry it: under ${ENV.linkBaseUrl}/accounts/NAME/ and signed with the key derived for the account (its API key is not read)`,
      default: "a link of the deployment's own routes",
    },
  },
  env: [ENV.linkSigningKey, ENV.linkBaseUrl],
  examples: [
    { line: 'sentinel link example.nl', says: 'a restore link valid for 7 days' },
    { line: 'sentinel link example.nl --ttl-days 1', says: 'valid for one day' },
    {
      line: 'sentinel link example.nl --account brand-a --accounts accounts.json',
      says: 'the link of account brand-a, under /accounts/brand-a/',
    },
  ],
};

export const restore: Command = {
  name: 'restore',
  args: '<domain>',
  summary: 'restore a quarantined domain through the reseller API (a paid action: it asks first)',
  about:
    'Looks the domain up first (restoring twice may be billed twice), shows its restore-by date, asks for ' +
    'the name to be typed and, for .nl, the registrant’s consent (SIDN restores only with it) unless --yes, ' +
    'and confirms an undocumented answer with a fresh look-up. With a ' +
    'state store, every attempt and its outcome is kept in its audit trail (sentinel audit shows it).',
  options: {
    yes: { type: 'boolean', doc: 'do not ask to type the name' },
    consent: {
      type: 'boolean',
      doc: 'the registrant agreed to the restore (needed with --yes for .nl: SIDN restores only with the registrant’s consent)',
    },
    again: {
      type: 'boolean',
      doc: 'send another restore although the audit trail holds one sent within 7 days and the domain still shows quarantine (it may be charged again; check the reseller’s control panel first). Without it, --yes refuses and the terminal asks',
    },
    state: {
      ...STATE_OPTION,
      doc: 'keep the attempt in this state store’s audit trail (as the restore link does)',
    },
    'base-url': BASE_URL_OPTION,
    ...ACCOUNT_OPTIONS,
  },
  env: [ENV.resellerApiKey, ENV.requestTimeoutMs, ENV.quarantineDays],
  examples: [
    { line: 'sentinel restore example.com', says: 'asks you to type the name first' },
    {
      line: 'sentinel restore example.nl --yes --consent --state .sentinel/state.json',
      says: 'in a script, once the registrant agreed; kept in the audit trail',
    },
  ],
};

export const audit: Command = {
  name: 'audit',
  summary: 'the audit trail of restores kept in the state store: every attempt, newest first',
  about:
    'Every POST to a validly signed restore link and every sentinel restore given the state store is kept ' +
    'with its outcome: domain, time, HTTP status, the link’s key id, client address and user agent (never ' +
    'the signature). The newest 200 that reached the reseller are kept, and apart from them the newest 100 ' +
    'refusals (5 an hour per link, the rest counted). A restore link and sentinel restore record a restore ' +
    'just before sending it: one whose outcome was never written (the function or command stopped) is ' +
    'listed as sent, outcome unknown: check the domain’s status.',
  options: {
    json: { type: 'boolean', doc: 'print the entries as JSON' },
    state: {
      ...STATE_OPTION,
      doc: 'the state store (file or table) the scans and the restore links use',
    },
    'base-url': {
      ...BASE_URL_OPTION,
      doc: 'the account whose trail to read in a table (the scans’ base URL)',
    },
    ...ACCOUNT_OPTIONS,
  },
  examples: [
    { line: 'sentinel audit --state .sentinel/state.json', says: 'one line per attempt' },
    {
      line: 'sentinel audit --state dynamodb:sentinel-state --json',
      says: 'from the deployed table, as JSON',
    },
  ],
};

/** `--now` of snooze and ack: the instant the action is dated, as a scan's --now dates the scan. */
const ACT_NOW = {
  type: 'string',
  value: 'ISO',
  doc: 'act as at this instant, as scan --now scans at it (a try-out pinned to one day); not ahead of this machine’s clock',
  default: 'now',
} as const;

/** Where snooze and ack write: the scans' own state, which the next scan reads the silence from. */
const SILENCE_STATE_OPTION = {
  ...STATE_OPTION,
  doc: 'the state store the scans use (a JSON file PATH, or dynamodb:TABLE): kept there, the next scan with it leaves the domain out',
};

/** What snooze and ack read besides their flags: the key, and what a finding is judged by. */
const SILENCE_ENV = [
  ENV.resellerApiKey,
  ENV.requestTimeoutMs,
  ENV.expiryDays,
  ENV.criticalDays,
  ENV.quarantineDays,
];

export const snooze: Command = {
  name: 'snooze',
  args: '<domain>',
  summary: 'leave a domain out of alerts for N days (back at once if it gets worse)',
  about:
    'What the snooze link’s button does, from the command line: the domain stays in the report, and comes ' +
    'back into alerts at once when it gets worse. Needs the state store the scans use.',
  options: {
    days: {
      type: 'string',
      value: 'N',
      doc: `days to snooze, 1 to ${MAX_SNOOZE_DAYS}`,
      default: String(DEFAULT_SNOOZE_DAYS),
    },
    now: ACT_NOW,
    state: SILENCE_STATE_OPTION,
    'base-url': BASE_URL_OPTION,
    ...ACCOUNT_OPTIONS,
  },
  env: SILENCE_ENV,
  examples: [
    { line: 'sentinel snooze example.nl --state .sentinel/state.json', says: 'out of alerts for 7 days' },
    { line: 'sentinel snooze example.nl --days 30 --state .sentinel/state.json', says: 'for 30 days' },
  ],
};

export const ack: Command = {
  name: 'ack',
  args: '<domain>',
  summary: 'leave a domain out of alerts until its expiry date, status or auto-renew changes',
  about:
    'What the acknowledge link’s button does ("we let this one go"), from the command line. Needs the state store the scans use.',
  options: { now: ACT_NOW, state: SILENCE_STATE_OPTION, 'base-url': BASE_URL_OPTION, ...ACCOUNT_OPTIONS },
  env: SILENCE_ENV,
  examples: [{ line: 'sentinel ack example.nl --state .sentinel/state.json', says: 'we let this one go' }],
};

/** Every command, in the order help and the CLI reference list them. */
export const COMMANDS: readonly Command[] = [
  scan,
  state,
  simulate,
  demo,
  tryAlerts,
  serve,
  link,
  restore,
  audit,
  snooze,
  ack,
];

/** The command of that name. */
export const commandNamed = (name: string): Command | undefined => COMMANDS.find((c) => c.name === name);

/** The commands that have `--flag`, for "--state is a flag of scan, snooze, ack". */
export const commandsWithFlag = (flag: string): string[] =>
  COMMANDS.filter((c) => flag in c.options).map((c) => c.name);
