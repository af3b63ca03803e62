import type { Node } from 'constructs';
import * as z from 'zod';
import { SECRET_SETTINGS, SETTINGS, ssmParameterName, wholeNumber } from '../functions/core/config';
import { ConfigError } from '../functions/core/errors';
import { scheduleIntervalHours, scheduleProblem } from './schedule';

/**
 * The deployment's settings, from CDK context (`-c key=value`, or cdk.json), validated at synth time
 * so a typo fails `cdk synth` with the key's name instead of a broken stack. Settings the functions
 * also read (thresholds, time zone, mode, label, base URL) use the very schema and default of
 * functions/core/config.ts; only what is the stack's own (schedule, subscribers, …) is defined here.
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

const [, , apiKeyParameter, signingKeyParameter] = SECRET_SETTINGS;

export const StackConfigSchema = z.object({
  resellerBaseUrl: z
    .string({
      message: 'is required: the reseller API base URL, e.g. -c resellerBaseUrl=https://api.reseller.example',
    })
    .pipe(SETTINGS.resellerBaseUrl.schema)
    .refine((u) => u.startsWith('https://'), 'must be an https URL: the API key travels in its requests'),
  apiKeyParameterName: ssmParameterName.default(apiKeyParameter.default),
  linkSigningKeyParameterName: ssmParameterName.default(signingKeyParameter.default),
  /** KMS key of the two SecureStrings; without it, decryption is allowed for any key but only through SSM and only for these parameters. */
  secretsKmsKeyArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]+$/, 'must be a KMS key ARN')
    .optional(),
  schedule: z
    .string()
    .trim()
    .superRefine((expression, ctx) => {
      const problem = scheduleProblem(expression);
      if (problem) ctx.addIssue({ code: 'custom', message: `is invalid: ${problem}` });
    })
    .default('cron(0 6 * * ? *)'),
  timeZone: SETTINGS.timeZone.schema,
  /** Longest expected gap between two scans; the dead-man alarm fires after it plus an hour's grace. Derived from rate() schedules. */
  scanIntervalHours: wholeNumber(1, 160).optional(),
  expiryDays: SETTINGS.expiryDays.schema,
  criticalDays: SETTINGS.criticalDays.schema,
  minSeverity: SETTINGS.minSeverity.schema,
  scanMode: SETTINGS.scanMode.schema,
  alertEmails: list(z.email('must be e-mail addresses')),
  alertSmsNumbers: list(
    z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be E.164 phone numbers such as +31612345678'),
  ),
  opsEmails: list(z.email('must be e-mail addresses')),
  accountLabel: SETTINGS.accountLabel.schema,
  /** QUARANTINE_DAYS as the functions take it (`nl=40,shop=30`), checked with the functions' own parser. */
  quarantineDays: z
    .string()
    .superRefine((text, ctx) => {
      const parsed = SETTINGS.quarantineDays.schema.safeParse(text);
      if (!parsed.success)
        ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? 'is invalid' });
    })
    .optional(),
  /**
   * Reserved concurrency of the scan function (1 = never two scans at once). Opt-in: Lambda keeps a
   * minimum of unreserved concurrency (100, or all of it on a new account whose quota is 10), so
   * reserving any there makes the deploy fail and roll back.
   */
  scanReservedConcurrency: wholeNumber(1, 1000).optional(),
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
  return { ...config, scanIntervalHours: config.scanIntervalHours ?? scheduleIntervalHours(config.schedule) };
}
