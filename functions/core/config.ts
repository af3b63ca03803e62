import { z } from 'zod';
import { SEVERITIES } from './classify';
import { ConfigError } from './errors';
import { SCAN_MODES } from './scan';

/**
 * Environment variable names, shared by the functions, the CDK constructs and the command-line
 * tool so that a rename cannot leave one of them behind.
 */
export const ENV = {
  resellerBaseUrl: 'RESELLER_BASE_URL',
  resellerApiKey: 'RESELLER_API_KEY',
  apiKeyParameter: 'RESELLER_API_KEY_PARAMETER',
  linkBaseUrl: 'LINK_BASE_URL',
  linkSigningKey: 'LINK_SIGNING_KEY',
  linkSigningKeyParameter: 'LINK_SIGNING_KEY_PARAMETER',
  linkTtlDays: 'LINK_TTL_DAYS',
  alertTopicArn: 'ALERT_TOPIC_ARN',
  expiryDays: 'EXPIRY_DAYS',
  criticalDays: 'CRITICAL_DAYS',
  minSeverity: 'MIN_SEVERITY',
  timeZone: 'ALERT_TIME_ZONE',
  scanMode: 'SCAN_MODE',
  perPage: 'PER_PAGE',
  concurrency: 'SCAN_CONCURRENCY',
  accountLabel: 'ACCOUNT_LABEL',
  requestTimeoutMs: 'RESELLER_TIMEOUT_MS',
} as const;

export type SettingName = keyof typeof ENV;

/** Which command-line flag sets which setting, for error messages that name both. */
export const FLAG_OF: Partial<Record<SettingName, string>> = {
  resellerBaseUrl: '--base-url',
  expiryDays: '--expiry-days',
  criticalDays: '--critical-days',
  minSeverity: '--min-severity',
  timeZone: '--time-zone',
  scanMode: '--mode',
  perPage: '--per-page',
  concurrency: '--concurrency',
};

const int = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `must be a whole number from ${min} to ${max}`)
        .max(max, `must be a whole number from ${min} to ${max}`),
    );

const httpUrl = z
  .string()
  .trim()
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'https:' || u.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL, e.g. https://api.example.com')
  .transform((s) => s.replace(/\/+$/, ''));

/** True for an IANA time zone name this runtime knows (UTC, Europe/Amsterdam, …). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const timeZone = z
  .string()
  .trim()
  .refine(isTimeZone, 'must be an IANA time zone such as UTC or Europe/Amsterdam');

/** Settings shared by the scan wherever it runs. Secrets are not here: they come from the environment or SSM. */
const ScanSettingsSchema = z
  .object({
    resellerBaseUrl: httpUrl,
    linkBaseUrl: httpUrl.optional(),
    linkTtlDays: int(1, 30).default(7),
    alertTopicArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN')
      .optional(),
    expiryDays: int(1, 3650).default(30),
    criticalDays: int(0, 3650).default(7),
    minSeverity: z
      .enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` })
      .default('warning'),
    timeZone: timeZone.default('UTC'),
    scanMode: z.enum(SCAN_MODES, { message: `must be one of ${SCAN_MODES.join(', ')}` }).default('auto'),
    perPage: int(1, 1000).default(100),
    concurrency: int(1, 32).default(4),
    requestTimeoutMs: int(100, 120_000).default(10_000),
    accountLabel: z.string().trim().max(40).optional(),
  })
  .refine((s) => s.criticalDays <= s.expiryDays, {
    message: 'must not exceed the expiry window',
    path: ['criticalDays'],
  });

export type ScanSettings = z.output<typeof ScanSettingsSchema>;

/** Raw values by setting name (strings, as from the environment or argv); undefined and '' mean unset. */
export type RawSettings = Partial<Record<SettingName, string | undefined>>;

/** Reads every known setting from an environment object. */
export function settingsFromEnv(env: NodeJS.ProcessEnv): RawSettings {
  const raw: RawSettings = {};
  for (const [name, variable] of Object.entries(ENV) as Array<[SettingName, string]>)
    raw[name] = env[variable];
  return raw;
}

/** Validates scan settings; the error names the variable (and flag) and what it must be. */
export function loadScanSettings(raw: RawSettings): ScanSettings {
  const cleaned = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ScanSettingsSchema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues
      .map((issue) => {
        const name = issue.path[0] as SettingName | undefined;
        const label = name ? `${ENV[name]}${FLAG_OF[name] ? ` (${FLAG_OF[name]})` : ''}` : 'settings';
        const message =
          issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
        return `${label} ${message}`;
      })
      .join('; '),
  );
}

/** Reads one required secret from the environment, naming the variable when it is missing. */
export function requireEnv(env: NodeJS.ProcessEnv, name: string, hint: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new ConfigError(`${name} is not set; ${hint}`);
  return value.trim();
}

/** CloudWatch names shared by the scan function (emits) and the stack's alarms (watch). */
export const METRICS = {
  namespace: 'DomainSentinel',
  service: 'scan',
  scanCompleted: 'ScanCompleted',
  criticalFindings: 'CriticalFindings',
  warningFindings: 'WarningFindings',
  domainsScanned: 'DomainsScanned',
  unreadableRecords: 'UnreadableRecords',
} as const;
