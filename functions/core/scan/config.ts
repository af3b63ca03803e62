import * as z from 'zod';
import { ConfigError } from '../base/errors';
import { closest } from '../base/suggest';
import { SEVERITIES } from '../findings/classify';
import { quarantineDaysSetting } from '../findings/quarantine-periods';
import { IANA_DNS_BOOTSTRAP_URL, rdapBootstrapSetting } from '../registry/bootstrap';
import { policiesSetting, resolvePolicies } from './policies';
import { quietHoursSchema } from './quiet-hours';
import { SCAN_MODES } from './scan';

/**
 * Every setting of domain-sentinel, defined once: its environment variable, command-line flag, CDK
 * context key, schema, default and one line of documentation. The command line, both Lambdas and the
 * CDK app (lib/config.ts) parse with these schemas; `sentinel help` and the README's Configuration
 * table are generated from / checked against this table (test/docs/generated.test.ts).
 */

/** The bodies a webhook can take (functions/core/alerts/webhook-formats.ts writes them). */
export const WEBHOOK_FORMATS = ['slack', 'teams', 'json'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** A whole number in [min, max], from a string (environment, argv, `-c key=value`) or a number (cdk.json). */
export const wholeNumber = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.preprocess(
    (value) => (typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value),
    z.number({ error: message }).int(message).min(min, message).max(max, message),
  );
};

/** An http(s) URL without trailing slashes. */
const httpUrl = z
  .string()
  .trim()
  .superRefine((s, ctx) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      u = new URL('about:blank');
    }
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be an http(s) URL without credentials, e.g. https://api.example.com',
      });
    } else if (/[?#]/.test(s)) {
      // Paths are appended to this base: `…/base?x=1` would turn every link into `…/base?x=1/restore/…`.
      ctx.addIssue({
        code: 'custom',
        message: 'must not carry a query (?…) or a fragment (#…): paths are appended to it; remove them',
      });
    }
  })
  .transform((s) => s.replace(/\/+$/, ''));

/** The host names that are this machine: where a URL may be plain http (a simulator, a local receiver). */
const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

/** True for a URL to this machine ({@link LOOPBACK_HOSTS}). */
export const isLoopbackUrl = (url: URL): boolean => LOOPBACK_HOSTS.includes(url.hostname);

/**
 * The reseller API's base, without its version: the client puts `/v2/…` after it, so a base that
 * already ends in `/v2` would ask for `/v2/v2/domains` and get a 404 that names no cause. https,
 * or http to this machine only (the simulator): the API key travels in every request. The one rule
 * for RESELLER_BASE_URL and for an account's `resellerBaseUrl` (a deployment asks https of both).
 */
export const resellerBaseUrl = httpUrl.superRefine((url, ctx) => {
  if (/\/v2$/i.test(url))
    ctx.addIssue({
      code: 'custom',
      message: `must not end in /v2: the client adds /v2 to every path itself; use ${url.replace(/\/v2$/i, '')}`,
    });
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed?.protocol === 'http:' && !isLoopbackUrl(parsed))
    ctx.addIssue({
      code: 'custom',
      message:
        'must be an https URL (http only to 127.0.0.1, [::1] or localhost): the API key travels in its requests',
    });
});

/** What is wrong with a time zone name this runtime does not know, with the closest one it knows. */
function timeZoneProblem(name: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: name });
    return undefined;
  } catch {
    const near = closest(name, ['UTC', ...Intl.supportedValuesOf('timeZone')]);
    return `must be an IANA time zone such as UTC or Europe/Amsterdam${near ? `; did you mean ${near}?` : ''}`;
  }
}

/** An SNS topic's ARN, as the stack sets it. */
const snsTopicArn = z
  .string()
  .trim()
  .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN');

/** `on` or `off` (also true/false: a settings file or props hold a boolean), read as a boolean. */
const onOff = z
  .preprocess(
    (value) =>
      value === true || value === 'true' ? 'on' : value === false || value === 'false' ? 'off' : value,
    z.enum(['on', 'off'], { message: 'must be on or off' }),
  )
  .default('off')
  .transform((value) => value === 'on');

/**
 * Text shown in a subject, digest and SMS: printable, one line. Control and invisible format
 * characters would let a setting forge lines or hide text, exactly as a hostile record could.
 */
const printableLabel = z
  .string()
  .trim()
  .max(40, 'must be at most 40 characters')
  .refine((s) => !/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(s), 'must not hold control or invisible characters');

/** One setting: where it comes from, what it must be, and what it is for. */
export interface SettingSpec {
  /** Environment variable. */
  readonly env: string;
  /** Command-line flag of `scan`, when it has one. */
  readonly flag?: string;
  /** CDK context key, when the stack sets it. */
  readonly context?: string;
  readonly schema: z.ZodType;
  /** The one default, shown in help and the README; absent = unset. */
  readonly default?: string | number;
  /** One line for `sentinel help` and the README. */
  readonly doc: string;
}

/** The settings of a scan and of the restore endpoint (secrets are in SECRET_SETTINGS). */
export const SETTINGS = {
  resellerBaseUrl: {
    env: 'RESELLER_BASE_URL',
    flag: '--base-url',
    context: 'resellerBaseUrl',
    schema: resellerBaseUrl,
    doc: 'reseller API base URL (live or test environment), without /v2; https (http only to this machine); required',
  },
  linkBaseUrl: {
    env: 'LINK_BASE_URL',
    schema: httpUrl.optional(),
    doc: 'public base of the restore endpoint; without it findings carry no links (the stack sets it)',
  },
  linkTtlDays: {
    env: 'LINK_TTL_DAYS',
    flag: '--ttl-days',
    schema: wholeNumber(1, 30).default(7),
    default: 7,
    doc: 'days a signed link stays valid',
  },
  alertTopicArn: {
    env: 'ALERT_TOPIC_ARN',
    schema: snsTopicArn.optional(),
    doc: 'SNS topic scan publishes to (the stack sets it); without it, scan needs --alert-to or --dry-run',
  },
  chatTopicArn: {
    env: 'CHAT_TOPIC_ARN',
    schema: snsTopicArn.optional(),
    doc: 'second SNS topic: each published alert is also published here as an Amazon Q Developer (AWS Chatbot) custom notification for Slack and Teams channels (the stack sets it; docs/chat.md)',
  },
  webhookFormat: {
    env: 'WEBHOOK_FORMAT',
    flag: '--webhook-format',
    schema: z.enum(WEBHOOK_FORMATS, { message: `must be one of ${WEBHOOK_FORMATS.join(', ')}` }).optional(),
    doc: 'with --webhook (WEBHOOK_URL): the body posted, a Slack incoming webhook (slack), a Teams Workflows webhook (teams) or the signed JSON report (json); docs/chat.md',
  },
  expiryDays: {
    env: 'EXPIRY_DAYS',
    flag: '--expiry-days',
    context: 'expiryDays',
    schema: wholeNumber(1, 3650).default(30),
    default: 30,
    doc: 'a domain expiring within this many days is `expiring`',
  },
  criticalDays: {
    env: 'CRITICAL_DAYS',
    flag: '--critical-days',
    context: 'criticalDays',
    schema: wholeNumber(0, 3650).default(7),
    default: 7,
    doc: 'expiring without auto-renew within this many days is critical',
  },
  minSeverity: {
    env: 'MIN_SEVERITY',
    flag: '--min-severity',
    context: 'minSeverity',
    schema: z.enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` }).default('warning'),
    default: 'warning',
    doc: 'publish when a finding reaches this severity',
  },
  timeZone: {
    env: 'ALERT_TIME_ZONE',
    flag: '--time-zone',
    context: 'timeZone',
    schema: z
      .string()
      .trim()
      .superRefine((zone, ctx) => {
        const problem = timeZoneProblem(zone);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default('UTC'),
    default: 'UTC',
    doc: 'zone of the dates in the digest (in the stack also the schedule’s zone)',
  },
  scanMode: {
    env: 'SCAN_MODE',
    flag: '--mode',
    schema: z.enum(SCAN_MODES, { message: `must be one of ${SCAN_MODES.join(', ')}` }).default('auto'),
    default: 'auto',
    doc: 'how a scan without state reads the account: auto (a filtered read proven complete by counts, or the whole account when it is a few pages, the proven parts would take more, or the proof fails), filtered (proven by counts, else the whole account), or full; a scan with state (and so the deployed one) always reads the whole account',
  },
  perPage: {
    env: 'PER_PAGE',
    flag: '--per-page',
    schema: wholeNumber(1, 1000).default(100),
    default: 100,
    doc: 'page size asked for; the server’s answer wins',
  },
  concurrency: {
    env: 'SCAN_CONCURRENCY',
    flag: '--concurrency',
    schema: wholeNumber(1, 32).default(8),
    default: 8,
    doc: 'most requests in flight at once: the scan starts at 4, grows while answers come fast, halves on 429/503',
  },
  requestTimeoutMs: {
    env: 'RESELLER_TIMEOUT_MS',
    flag: '--timeout-ms',
    schema: wholeNumber(100, 120_000).default(10_000),
    default: 10_000,
    doc: 'per-request timeout of the reseller API, in ms',
  },
  timeBudgetSeconds: {
    env: 'SCAN_TIME_BUDGET',
    flag: '--time-budget',
    schema: wholeNumber(1, 86_400).default(900),
    default: 900,
    doc: 'seconds a command-line scan may take before it fails (the Lambda uses its own timeout)',
  },
  maxResponseMb: {
    env: 'RESELLER_MAX_RESPONSE_MB',
    flag: '--max-response-mb',
    schema: wholeNumber(1, 1024).default(32),
    default: 32,
    doc: 'largest reseller API response read, in MiB; a larger one is aborted while it streams',
  },
  state: {
    env: 'STATE',
    flag: '--state',
    schema: z.string().trim().min(1).optional(),
    doc: 'memory between scans: a JSON file PATH, or dynamodb:TABLE; alert on change (forces a full read)',
  },
  stateTableName: {
    env: 'STATE_TABLE_NAME',
    schema: z.string().trim().min(1).optional(),
    doc: 'the state table of the scan Lambda (the stack sets it)',
  },
  alertThresholds: {
    env: 'ALERT_THRESHOLDS',
    schema: z
      .string()
      .trim()
      .regex(
        /^\d{1,4}(\s*,\s*\d{1,4})*$/,
        'must list whole numbers of days, comma-separated, e.g. 30,14,7,3,1',
      )
      .transform((text) => [...new Set(text.split(',').map((p) => Number(p.trim())))].sort((a, b) => b - a))
      .pipe(
        z.array(
          z.number().int().min(1, 'must list days from 1 to 3650').max(3650, 'must list days from 1 to 3650'),
        ),
      )
      .default([30, 14, 7, 3, 1]),
    default: '30,14,7,3,1',
    doc: 'with state: the days-left rungs an expiring domain is alerted again at',
  },
  criticalRepeatHours: {
    env: 'CRITICAL_REPEAT_HOURS',
    schema: wholeNumber(1, 8760).default(20),
    default: 20,
    doc: "with state: a critical finding is repeated after this many hours until resolved; the deployment-wide default of the policies file's `repeat.critical` (docs/policies.md), which takes precedence",
  },
  summaryEveryDays: {
    env: 'SUMMARY_EVERY_DAYS',
    schema: wholeNumber(0, 365).default(7),
    default: 7,
    doc: 'with state: a summary even when nothing changed, every this many days (0: never)',
  },
  quarantineDays: {
    env: 'QUARANTINE_DAYS',
    context: 'quarantineDays',
    schema: quarantineDaysSetting,
    doc: 'restore periods by TLD over the built-in table (docs/deadlines.md), e.g. nl=40,shop=30; a TLD in neither says "restore deadline unknown"',
  },
  deploymentName: {
    env: 'DEPLOYMENT_NAME',
    schema: z
      .string()
      .trim()
      .max(255, 'must be at most 255 characters')
      .refine((s) => !/[\p{Cc}\p{Cf}]/u.test(s), 'must not hold control or invisible characters')
      .optional(),
    doc: 'the dimension `deployment` of every metric, telling two deployments in one account apart (the stack sets it)',
  },
  accountLabel: {
    env: 'ACCOUNT_LABEL',
    context: 'accountLabel',
    schema: printableLabel.optional(),
    doc: 'name shown in the subject, digest and SMS (at most 40 characters)',
  },
  policiesFile: {
    env: 'POLICIES_FILE',
    flag: '--policies',
    schema: z.string().trim().min(1).optional(),
    doc: 'a JSON file of policies per domain group (docs/policies.md): thresholds, recipients and domains let lapse, by tag, TLD or name; the first policy that fits a domain applies',
  },
  policies: {
    env: 'POLICIES',
    context: 'policies',
    schema: policiesSetting.optional(),
    doc: 'the policies as JSON, as in a policies file (the stack sets it from `policies`, a settings file’s object or a path to one; docs/policies.md)',
  },
  smsQuietHours: {
    env: 'SMS_QUIET_HOURS',
    flag: '--sms-quiet-hours',
    context: 'smsQuietHours',
    schema: quietHoursSchema.optional(),
    doc: 'e.g. 22:00-07:00 in ALERT_TIME_ZONE: an SMS waits until the window ends, unless a restore-by or expiry is within 48 hours (docs/policies.md)',
  },
  heldSmsScheduleGroup: {
    env: 'HELD_SMS_SCHEDULE_GROUP',
    schema: z
      .string()
      .trim()
      .regex(/^[0-9a-zA-Z_.-]{1,64}$/, 'must be an EventBridge Scheduler schedule group name')
      .optional(),
    doc: 'with SMS_QUIET_HOURS: the EventBridge Scheduler group an SMS held is scheduled in, to be sent when the window ends (the stack sets it with `smsQuietHours`)',
  },
  heldSmsRoleArn: {
    env: 'HELD_SMS_ROLE_ARN',
    schema: z
      .string()
      .trim()
      .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/, 'must be an IAM role ARN')
      .optional(),
    doc: 'with SMS_QUIET_HOURS: the role the schedule publishes a held SMS with (the stack sets it with `smsQuietHours`)',
  },
  registryCheck: {
    env: 'REGISTRY_CHECK',
    flag: '--registry-check',
    context: 'registryCheck',
    schema: onOff,
    default: 'off',
    doc: 'check domains against their registry’s RDAP too (on or off; docs/registry.md): every domain with a finding at warning or above and a rotating sample of the rest; the scan then reads the whole account',
  },
  rdapBootstrapUrl: {
    env: 'RDAP_BOOTSTRAP_URL',
    flag: '--rdap-bootstrap',
    schema: rdapBootstrapSetting,
    default: IANA_DNS_BOOTSTRAP_URL,
    doc: 'with the registry check: the RDAP bootstrap (RFC 9224) naming each TLD’s RDAP server, a URL (https) or a file path; kept for a day',
  },
  rdapQueryBudget: {
    env: 'RDAP_QUERY_BUDGET',
    flag: '--rdap-budget',
    context: 'rdapQueryBudget',
    schema: wholeNumber(1, 1_000_000).default(2000),
    default: 2000,
    doc: 'with the registry check: most domains looked up per scan, the ones with a finding first (docs/registry.md has the arithmetic)',
  },
  registryCheckDays: {
    env: 'REGISTRY_CHECK_DAYS',
    flag: '--registry-days',
    context: 'registryCheckDays',
    schema: wholeNumber(1, 366).default(30),
    default: 30,
    doc: 'with the registry check: days over which the rotating sample covers every domain of the account',
  },
  registryToleranceDays: {
    env: 'REGISTRY_TOLERANCE_DAYS',
    flag: '--registry-tolerance-days',
    schema: wholeNumber(0, 365).default(2),
    default: 2,
    doc: 'with the registry check: the registry’s and the reseller’s expiry dates further apart than this disagree',
  },
  rdapTimeoutMs: {
    env: 'RDAP_TIMEOUT_MS',
    flag: '--rdap-timeout-ms',
    schema: wholeNumber(100, 60_000).default(10_000),
    default: 10_000,
    doc: 'with the registry check: per-request timeout of an RDAP server, in ms',
  },
} as const satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof SETTINGS;

/**
 * Environment variable names, shared by the functions, the constructs and the command line: each
 * setting's own (named once, in SETTINGS), and the secrets' and the webhook targets'.
 */
export const ENV = {
  ...(Object.fromEntries(Object.entries(SETTINGS).map(([name, spec]) => [name, spec.env])) as {
    readonly [N in SettingName]: (typeof SETTINGS)[N]['env'];
  }),
  resellerApiKey: 'RESELLER_API_KEY',
  apiKeyParameter: 'RESELLER_API_KEY_PARAMETER',
  linkSigningKey: 'LINK_SIGNING_KEY',
  linkSigningKeyParameter: 'LINK_SIGNING_KEY_PARAMETER',
  webhookUrl: 'WEBHOOK_URL',
  webhookSigningKey: 'WEBHOOK_SIGNING_KEY',
  webhookSigningKeyParameter: 'WEBHOOK_SIGNING_KEY_PARAMETER',
  webhookTargets: 'WEBHOOK_TARGETS',
  heartbeatUrl: 'HEARTBEAT_URL',
  heartbeatUrlParameter: 'HEARTBEAT_URL_PARAMETER',
} as const;

/** The name of an SSM parameter, as the stack is given it. */
export const ssmParameterName = z
  .string()
  .regex(
    /^\/[A-Za-z0-9_.\-/]{1,1010}$/,
    'must be an SSM parameter name starting with "/", e.g. /domain-sentinel/reseller-api-key',
  );

/** Secrets: documented here, read only through a SecretSource (functions/aws/secrets.ts). */
export const SECRET_SETTINGS = [
  {
    env: ENV.resellerApiKey,
    doc: 'the reseller API key (command line); sent only as "Authorization: Bearer", never printed',
  },
  {
    env: ENV.linkSigningKey,
    doc: 'key(s) that sign links, comma-separated, the first signs (at least 32 characters each)',
  },
  {
    env: ENV.apiKeyParameter,
    context: 'apiKeyParameterName',
    default: '/domain-sentinel/reseller-api-key',
    doc: 'SSM SecureString holding the API key (Lambda; the stack sets it)',
  },
  {
    env: ENV.linkSigningKeyParameter,
    context: 'linkSigningKeyParameterName',
    default: '/domain-sentinel/link-signing-key',
    doc: 'SSM SecureString holding the link signing key(s) (Lambda; the stack sets it)',
  },
  {
    env: ENV.webhookUrl,
    doc: 'scan --webhook: the webhook the alert is posted to (a secret: never printed, only its host)',
  },
  {
    env: ENV.webhookSigningKey,
    doc: 'key that signs the JSON webhook (X-Sentinel-Signature, docs/chat.md), at least 32 characters (command line)',
  },
  {
    env: ENV.webhookSigningKeyParameter,
    context: 'webhookSigningKeyParameterName',
    default: '/domain-sentinel/webhook-signing-key',
    doc: 'SSM SecureString holding the JSON webhook signing key (Lambda; the stack sets it when a json webhook is configured)',
  },
  {
    env: ENV.heartbeatUrl,
    doc: 'scan --heartbeat-url: GET after every complete scan, GET URL/fail after a failed one (Healthchecks.io, Cronitor); a secret: never printed, only its host',
  },
  {
    env: ENV.heartbeatUrlParameter,
    context: 'heartbeatUrlParameterName',
    doc: 'SSM SecureString holding the heartbeat URL (Lambda; the stack sets it when `heartbeatUrlParameterName` names one, docs/deploy.md)',
  },
] as const;

type Parsed<N extends SettingName> = z.output<(typeof SETTINGS)[N]['schema']>;

/** Settings of a scan, wherever it runs. */
export type ScanSettings = { readonly [N in SettingName]: Parsed<N> };

/** Raw values by setting name (strings, as from the environment or argv); undefined and '' mean unset. */
export type RawSettings = Partial<Record<SettingName, string | undefined>>;

/** Reads every known setting from an environment object. */
export function settingsFromEnv(env: NodeJS.ProcessEnv): RawSettings {
  const raw: RawSettings = {};
  for (const [name, spec] of Object.entries(SETTINGS) as Array<[SettingName, SettingSpec]>)
    raw[name] = env[spec.env];
  return raw;
}

/**
 * The flag that sets a setting where the message is read, if any: a message names only a flag the
 * command at hand accepts. @default the setting's own `flag` (the scan's)
 */
export type FlagOf = (name: SettingName) => string | undefined;

const ownFlag: FlagOf = (name) => (SETTINGS[name] as SettingSpec).flag;

const label = (name: SettingName, flagOf: FlagOf): string => {
  const flag = flagOf(name);
  return `${SETTINGS[name].env}${flag ? ` (${flag})` : ''}`;
};

/** A zod issue in words that name the setting: `EXPIRY_DAYS (--expiry-days) must be …`. */
function describe(name: SettingName, issue: z.core.$ZodIssue, given: unknown, flagOf: FlagOf): string {
  const missing = given === undefined || given === '';
  return `${label(name, flagOf)} ${missing && issue.code === 'invalid_type' ? 'is required' : issue.message}`;
}

/** Validates one setting on its own, naming it on failure. */
export function parseSetting<N extends SettingName>(
  name: N,
  value: unknown,
  flagOf: FlagOf = ownFlag,
): Parsed<N> {
  const parsed = SETTINGS[name].schema.safeParse(value === '' ? undefined : value);
  if (parsed.success) return parsed.data as Parsed<N>;
  throw new ConfigError(issuesOf(name, parsed.error, value, flagOf).join('; '));
}

/** What is wrong with one setting's value, each thing said once (a huge number fails two checks in the same words). */
const issuesOf = (name: SettingName, error: z.ZodError, value: unknown, flagOf: FlagOf): string[] => [
  ...new Set(error.issues.map((i) => describe(name, i, value, flagOf))),
];

/** Validates every scan setting; the error names each bad variable (and flag) and what it must be. */
export function loadScanSettings(raw: RawSettings, flagOf: FlagOf = ownFlag): ScanSettings {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const value = raw[name];
    const parsed = SETTINGS[name].schema.safeParse(value === '' ? undefined : value);
    if (parsed.success) out[name] = parsed.data;
    else problems.push(...issuesOf(name, parsed.error, value, flagOf));
  }
  const settings = out as ScanSettings;
  if (problems.length === 0 && settings.criticalDays > settings.expiryDays)
    problems.push(
      `${label('criticalDays', flagOf)} must not exceed the expiry window (${label('expiryDays', flagOf)})`,
    );
  if (problems.length === 0 && settings.policies) {
    try {
      resolvePolicies(settings.policies, {
        classify: { expiryDays: settings.expiryDays, criticalDays: settings.criticalDays },
        minSeverity: settings.minSeverity,
      });
    } catch (error) {
      problems.push(`${label('policies', flagOf)} ${(error as Error).message}`);
    }
  }
  if (problems.length) throw new ConfigError(problems.join('; '));
  return settings;
}

/** The settings the restore endpoint needs: only the reseller's base URL (secrets come from a SecretSource). */
export function loadRestoreSettings(
  raw: RawSettings,
  flagOf: FlagOf = ownFlag,
): Pick<ScanSettings, 'resellerBaseUrl'> {
  return { resellerBaseUrl: parseSetting('resellerBaseUrl', raw.resellerBaseUrl, flagOf) };
}

/** CloudWatch names shared by the scan function (emits) and the stack's alarms (watch). */
export const METRICS = {
  namespace: 'DomainSentinel',
  service: 'scan',
  scanCompleted: 'ScanCompleted',
  /** Critical items as the alert counts them (alerts/alert.ts criticalCount): the name kept from when it counted findings alone. */
  criticalFindings: 'CriticalFindings',
  warningFindings: 'WarningFindings',
  domainsScanned: 'DomainsScanned',
  /** The reseller's records that could not be read (alerts/alert.ts unreadableCount): not those read by their dates only or with their registrant given twice, nor damaged state. */
  unreadableRecords: 'UnreadableRecords',
  /** HTTP requests sent to the reseller API, retries included, and those answered 429. */
  resellerRequests: 'ResellerRequests',
  resellerThrottled: 'ResellerThrottled',
  /** The web function's service dimension, and its one metric: a request's outcome (dimensions action, outcome). */
  webService: 'web',
  webOutcome: 'WebOutcome',
  /**
   * The WebOutcome of a restore attempt the audit trail could not keep (action `restore`): the
   * restore is answered as it went, and this data point is what raises the ops alarm.
   */
  auditFailedOutcome: 'audit_failed',
  /** The webhook subscriber's service dimension, and its count of webhooks that answered 4xx (a configuration error). */
  webhookService: 'webhook',
  webhookRejected: 'WebhookRejected',
  /** Dimension naming the deployment (SETTINGS.deploymentName), on every metric of both functions. */
  deploymentDimension: 'deployment',
  /** Dimension naming the account, on the scan's metrics when the deployment scans several (docs/accounts.md). */
  accountDimension: 'account',
  /** An account's scan failed (put by the state machine, which sees every way an invocation fails). */
  scanFailed: 'ScanFailed',
} as const;
