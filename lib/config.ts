import type { Node } from 'constructs';
import { z } from 'zod';
import { SEVERITIES } from '../functions/core/classify';
import { isTimeZone } from '../functions/core/config';
import { ConfigError } from '../functions/core/errors';
import { SCAN_MODES } from '../functions/core/scan';

/**
 * The deployment's settings, from CDK context (defaults in cdk.json, `-c key=value` overrides),
 * validated at synth time so a typo fails `cdk synth` with the key's name instead of a broken stack.
 */

const list = <T extends z.ZodType<string>>(item: T) =>
  z.preprocess((value) => {
    // `-c alertEmails=a@x.nl,b@x.nl` arrives as one string; cdk.json may hold an array.
    if (typeof value === 'string')
      return value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    return value;
  }, z.array(item).default([]));

const wholeNumber = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ error: message }).int(message).min(min, message).max(max, message);
};

const parameterName = z
  .string()
  .regex(
    /^\/[A-Za-z0-9_.\-/]{1,1010}$/,
    'must be an SSM parameter name starting with "/", e.g. /domain-sentinel/reseller-api-key',
  );

const SCHEDULE = /^(cron\(([^)]+)\)|rate\((\d+) (minute|minutes|hour|hours|day|days)\))$/;

export const StackConfigSchema = z.object({
  resellerBaseUrl: z
    .string({
      message: 'is required: the reseller API base URL, e.g. -c resellerBaseUrl=https://api.reseller.example',
    })
    .url('must be an https URL')
    .refine((u) => u.startsWith('https://'), 'must be an https URL: the API key travels in its requests'),
  apiKeyParameterName: parameterName.default('/domain-sentinel/reseller-api-key'),
  linkSigningKeyParameterName: parameterName.default('/domain-sentinel/link-signing-key'),
  /** KMS key of the two SecureStrings; without it, decryption is allowed for any key but only through SSM and only for these parameters. */
  secretsKmsKeyArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]+$/, 'must be a KMS key ARN')
    .optional(),
  schedule: z
    .string()
    .regex(SCHEDULE, 'must be an EventBridge Scheduler expression: cron(0 6 * * ? *) or rate(12 hours)')
    .default('cron(0 6 * * ? *)'),
  timeZone: z
    .string()
    .refine(isTimeZone, 'must be an IANA time zone such as Europe/Amsterdam')
    .default('UTC'),
  /** Longest expected gap between two scans; the dead-man alarm fires after it plus an hour's grace. Derived from rate() schedules. */
  scanIntervalHours: wholeNumber(1, 160).optional(),
  expiryDays: wholeNumber(1, 3650).default(30),
  criticalDays: wholeNumber(0, 3650).default(7),
  minSeverity: z.enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` }).default('warning'),
  scanMode: z.enum(SCAN_MODES, { message: `must be one of ${SCAN_MODES.join(', ')}` }).default('auto'),
  alertEmails: list(z.email('must be e-mail addresses')),
  alertSmsNumbers: list(
    z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be E.164 phone numbers such as +31612345678'),
  ),
  opsEmails: list(z.email('must be e-mail addresses')),
  accountLabel: z.string().max(40).optional(),
});

export type StackConfig = z.output<typeof StackConfigSchema>;

const KEYS = Object.keys(StackConfigSchema.shape) as Array<keyof StackConfig>;

/** Reads every key from the construct tree's context and validates it; the error names each bad key. */
export function loadStackConfig(node: Node): StackConfig & { readonly scanIntervalHours: number } {
  const raw: Record<string, unknown> = {};
  for (const key of KEYS) {
    const value = node.tryGetContext(key);
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = StackConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      `invalid context: ${parsed.error.issues.map((i) => `${String(i.path[0] ?? 'context')} ${i.message}`).join('; ')}`,
    );
  }
  const config = parsed.data;
  if (config.criticalDays > config.expiryDays)
    throw new ConfigError('invalid context: criticalDays must not exceed expiryDays');
  return { ...config, scanIntervalHours: config.scanIntervalHours ?? intervalOf(config.schedule) };
}

/** Hours between runs of a rate() schedule; 24 for cron() (daily is the usual cron here). */
function intervalOf(schedule: string): number {
  const m = SCHEDULE.exec(schedule);
  if (!m?.[3]) return 24;
  const n = Number(m[3]);
  const unit = m[4] ?? 'hours';
  const hours = unit.startsWith('minute') ? n / 60 : unit.startsWith('hour') ? n : n * 24;
  return Math.max(1, Math.ceil(hours));
}
