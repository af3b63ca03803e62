import { resolve } from 'node:path';
import type { Node } from 'constructs';
import * as z from 'zod';
import { ConfigError } from '../functions/core/base/errors';
import { duplicateKey, notJsonReason, twiceWords } from '../functions/core/base/json';
import { editDistance } from '../functions/core/base/suggest';
import type { Severity } from '../functions/core/findings/classify';
import { ACCOUNT_SCAN_SETTINGS, accountName, MAX_ACCOUNTS } from '../functions/core/scan/accounts';
import { ENV, SECRET_SETTINGS, SETTINGS, ssmParameterName, wholeNumber } from '../functions/core/scan/config';
import type { Policies } from '../functions/core/scan/policies';
import { quietHoursSchema } from '../functions/core/scan/quiet-hours';
import { MAX_CONFIG_FILE_BYTES, readRegularFileSync } from '../functions/local/regular-file';
import { ALARM_MAX_HOURS, DEAD_MAN_GRACE_HOURS, deadManWatch, scheduleProblem } from './schedule';
import {
  deployedResellerBaseUrl,
  dollars,
  flag,
  guid,
  list,
  policiesObject,
  webAclArn,
  webhookEntry,
} from './setting-schemas';

/**
 * The deployment's settings, defined once. The same schema validates the `DomainSentinel`
 * construct's props, a settings file (`cdk deploy -c settings=FILE`) and CDK context
 * (`-c key=value`, cdk.json), so a typo fails `cdk synth` with the key's name instead of a broken
 * stack. Settings the functions also read (thresholds, time zone, mode, label, base URL) use the
 * very schema and default of functions/core/scan/config.ts; only what is the stack's own (schedule,
 * subscribers, alarms, …) is defined here.
 */

const [, , apiKeyParameter, signingKeyParameter, , , webhookSigningKeyParameter] = SECRET_SETTINGS;

/** The settings of one DomainSentinel: its props, and the keys of a settings file and of `-c`. */
export const SentinelSettingsSchema = z
  .object({
    resellerBaseUrl: z
      .string({
        message:
          'is required: the reseller API base URL, e.g. -c resellerBaseUrl=https://api.reseller.example',
      })
      .pipe(deployedResellerBaseUrl),
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
    /** The dead-man alarm's wait for a scan when longer than the schedule's longest gap (which it always waits), before its grace hour. */
    scanIntervalHours: wholeNumber(1, ALARM_MAX_HOURS - DEAD_MAN_GRACE_HOURS).optional(),
    expiryDays: SETTINGS.expiryDays.schema,
    criticalDays: SETTINGS.criticalDays.schema,
    minSeverity: SETTINGS.minSeverity.schema,
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
    scanTimeoutMinutes: wholeNumber(1, 15).optional(),
    /**
     * SNS's "Filter policies per topic" in the account and region, once raised through Service
     * Quotas: every recipient of an account's own, of a group, of escalations, and each chat queue
     * subscribes with a filter, and the synth refuses more than this on the alert topic.
     */
    snsFilterPoliciesPerTopic: wholeNumber(200, 100_000).default(200),
    /** Slack workspace (team) id of Amazon Q Developer in chat applications, after its one-time authorisation. */
    slackWorkspaceId: z
      .string()
      .regex(
        /^[0-9A-Z]{1,255}$/,
        'must be a Slack workspace id such as T07ABCDEF12 (upper-case letters and digits)',
      )
      .optional(),
    /** Slack channel id the chat message goes to. */
    slackChannelId: z
      .string()
      .regex(/^[A-Za-z0-9]{1,255}$/, 'must be a Slack channel id such as C07ABCDEF12 (letters and digits)')
      .optional(),
    teamsTeamId: guid('team id from the channel link (groupId=…)').optional(),
    teamsTenantId: guid('tenant id from the channel link (tenantId=…)').optional(),
    teamsChannelId: z
      .string()
      .regex(
        /^[A-Za-z0-9\-_=+/.,]*%3[aA][A-Za-z0-9\-_=+/.,]*%40[A-Za-z0-9\-_=+/.,]*$/,
        'must be the Teams channel id from the channel link, URL-encoded: 19%3a…%40thread.tacv2',
      )
      .optional(),
    /** Webhooks the webhook subscriber posts each alert to: `FORMAT:/ssm/parameter` (slack, teams or json). */
    webhooks: list(webhookEntry),
    webhookSigningKeyParameterName: ssmParameterName.default(webhookSigningKeyParameter.default),
    /** The alert topic is subscribed outside the stack (after the deploy, by hand or by another stack). */
    alertSubscribersOutsideStack: flag.default(false),
    /** The SMS spend alarm fires when SNS's month-to-date SMS spend reaches this (the account's limit is 1 USD until raised). */
    smsSpendAlarmUsd: dollars.default(0.8),
    /**
     * This deployment owns what exists once per account and region (API Gateway's CloudWatch Logs
     * role, SNS's SMS delivery-status logging): it sets them, and when destroyed clears each that still names its role.
     */
    ownAccountSettings: flag.default(false),
    /** A regional AWS WAF web ACL the web API's stage is associated with (docs/security.md): per-address rate limits before the stage's own throttle. */
    webAclArn: webAclArn.optional(),
    /** Adopt the state table an earlier deployment kept (its output StateTableName) instead of making a new one. */
    stateTableName: z
      .string()
      .regex(
        /^[A-Za-z0-9_.-]{3,255}$/,
        'must be a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), as the output StateTableName gave it',
      )
      .optional(),
    /** Adopt the report bucket an earlier deployment kept (its output ReportBucketName) instead of making a new one. */
    reportBucketName: z
      .string()
      .regex(
        /^(?!xn--)(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
        'must be an S3 bucket name (3 to 63 of a-z 0-9 . -), as the output ReportBucketName gave it',
      )
      .optional(),
    /**
     * Several reseller accounts (docs/accounts.md): the accounts file's path (`-c accounts=FILE`,
     * `"accounts": "accounts.json"`) or its list. Read and checked before the rest (see
     * {@link parseAccounts}), so here it is always the checked list.
     */
    accounts: z
      .custom<readonly AccountSettings[]>((value) => Array.isArray(value), 'must be the accounts file')
      .optional(),
    /** Accounts scanned at once by the state machine's Map (its MaxConcurrency). */
    accountConcurrency: wholeNumber(1, 40).default(4),
    /** Policies per domain group: the object, or the path of a JSON file holding it (read before, see {@link withPoliciesRead}). */
    policies: policiesObject.optional(),
    /** SMS_QUIET_HOURS (`22:00-07:00`, in timeZone), as written once checked: the stack adds the scheduler that releases a held SMS. */
    smsQuietHours: quietHoursSchema.transform((window) => window.text).optional(),
    /** SSM SecureString holding the heartbeat URL (docs/deploy.md): the scan may read it, and no other. */
    heartbeatUrlParameterName: ssmParameterName.optional(),
    /** The registry check (docs/registry.md): the scan function also asks registries' RDAP servers, over the internet. */
    registryCheck: SETTINGS.registryCheck.schema,
    rdapQueryBudget: SETTINGS.rdapQueryBudget.schema,
    registryCheckDays: SETTINGS.registryCheckDays.schema,
  })
  .strict();

/** A CloudFormation stack name: a letter, then letters, digits and hyphens, at most 128. */
const stackName = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9-]{0,127}$/,
    'must be a CloudFormation stack name: a letter, then letters, digits and hyphens (at most 128)',
  );

/** What `bin/app.ts` deploys: one DomainSentinel's settings plus the name of its stack. */
export const DeploySettingsSchema = SentinelSettingsSchema.extend({
  stackName: stackName.default('DomainSentinel'),
}).strict();

export type SentinelSettings = z.output<typeof SentinelSettingsSchema>;
export type DeploySettings = z.output<typeof DeploySettingsSchema>;

/** A setting's value with its derived parts filled in. */
export type ResolvedSettings<T extends SentinelSettings = SentinelSettings> = T & {
  /** The dead-man alarm's wait; none when CloudWatch cannot watch so long and the heartbeat's service does. */
  readonly scanIntervalHours: number | undefined;
};

const KNOWN = Object.keys(DeploySettingsSchema.shape);

/**
 * Context keys that are not domain-sentinel's: CDK's own (`@aws-cdk/…` feature flags, `aws:cdk:…`,
 * lookups such as `availability-zones:…`), the notices the CLI was told to hide, and `settings`, the
 * file that holds the rest.
 */
const isForeignContextKey = (key: string) =>
  key.startsWith('@') || key.includes(':') || key === 'acknowledged-issue-numbers' || key === 'settings';

/** The known setting closest to `key`. */
export function closestSetting(key: string, known: readonly string[] = KNOWN): string {
  const lower = key.toLowerCase();
  const away = (name: string) => editDistance(lower, name.toLowerCase());
  return [...known].sort((a, b) => away(a) - away(b))[0] ?? '';
}

const unknownKey = (key: string, where: string, known: readonly string[]) =>
  `${where}: unknown setting ${key}; did you mean ${closestSetting(key, known)}?`;

/** Validates settings from one source; the error names each bad key and where it came from. */
function parseWith<S extends z.ZodObject>(
  schema: S,
  given: unknown,
  where: string,
  cwd = process.cwd(),
): z.output<S> {
  const known = Object.keys(schema.shape);
  const raw = withPoliciesRead(withAccountsRead(given, where, cwd), where, cwd);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => unknownKey(key, where, known))
        : [`${where}: ${String(issue.path[0] ?? 'settings')} ${issue.message}`],
    );
    throw new ConfigError(problems.join('; '));
  }
  const settings = parsed.data as Partial<SentinelSettings>;
  if ((settings.criticalDays ?? 0) > (settings.expiryDays ?? Number.POSITIVE_INFINITY))
    throw new ConfigError(`${where}: criticalDays must not exceed expiryDays`);
  const partial = (keys: readonly (keyof SentinelSettings)[]) =>
    keys.some((k) => settings[k] !== undefined) && !keys.every((k) => settings[k] !== undefined);
  if (schema.shape.slackWorkspaceId && partial(['slackWorkspaceId', 'slackChannelId']))
    throw new ConfigError(`${where}: slackWorkspaceId and slackChannelId go together: set both, or neither`);
  if (schema.shape.teamsTeamId && partial(['teamsTeamId', 'teamsTenantId', 'teamsChannelId']))
    throw new ConfigError(
      `${where}: teamsTeamId, teamsTenantId and teamsChannelId go together: set all three, or none`,
    );
  const policiesText = settings.policies ? JSON.stringify(settings.policies) : '';
  if (policiesText.length > POLICIES_ENVIRONMENT_MAX)
    throw new ConfigError(
      `${where}: policies take ${policiesText.length} characters of the functions' environment, at most ${POLICIES_ENVIRONMENT_MAX} (Lambda holds 4 KB of environment in all): shorten them (fewer or shorter name patterns, recipients), or give accounts their own in the accounts file, which has room for ${65_536}`,
    );
  // The scan sends an account's key to its reseller: a parameter of the deployment's own secrets would go there.
  const secrets = [
    settings.linkSigningKeyParameterName,
    settings.webhookSigningKeyParameterName,
    settings.heartbeatUrlParameterName,
  ];
  for (const account of settings.accounts ?? []) {
    if (account.apiKeyParameter !== undefined && secrets.includes(account.apiKeyParameter))
      throw new ConfigError(
        `${where}: account ${account.name}: apiKeyParameter ${account.apiKeyParameter} is the deployment's own secret (its link signing key, webhook signing key or heartbeat URL), which the scan would send to the account's reseller as its key; give the account a parameter of its own key`,
      );
    const deployed = deployedResellerBaseUrl.optional().safeParse(account.resellerBaseUrl);
    if (!deployed.success)
      throw new ConfigError(
        `${where}: account ${account.name}: resellerBaseUrl ${deployed.error.issues[0]?.message}`,
      );
    const critical = account.criticalDays ?? settings.criticalDays ?? 0;
    const expiry = account.expiryDays ?? settings.expiryDays ?? Number.POSITIVE_INFINITY;
    if (critical > expiry)
      throw new ConfigError(
        `${where}: account ${account.name}: criticalDays (${critical}) must not exceed expiryDays (${expiry})`,
      );
  }
  return parsed.data as z.output<S>;
}

/** Fills in what is derived from other settings; refuses a schedule the dead-man alarm cannot watch. */
function resolved<T extends SentinelSettings>(settings: T, where: string): ResolvedSettings<T> {
  const { intervalHours, problem } = deadManWatch(settings);
  if (problem) throw new ConfigError(`${where}: ${problem}`);
  return { ...settings, scanIntervalHours: intervalHours };
}

/**
 * Validates the props of a DomainSentinel with the one schema: a user's CDK app gets the same
 * errors, naming the same keys, as `cdk deploy -c key=value`.
 */
export function parseSentinelSettings(
  props: unknown,
  where = 'invalid DomainSentinel props',
  cwd = process.cwd(),
): ResolvedSettings {
  return resolved(parseWith(SentinelSettingsSchema, props, where, cwd), where);
}

/** Reads a settings file: a JSON object of settings, resolved from the directory `cdk` runs in. */
export function readSettingsFile(path: string, cwd = process.cwd()): Record<string, unknown> {
  return readJsonObject(
    path,
    cwd,
    'settings file',
    'a JSON object of settings, e.g. {"resellerBaseUrl": "https://…"}',
  );
}

/**
 * The deploy settings of `bin/app.ts`: the settings file named by context `settings` (if any), then
 * every other context key over it (`-c key=value` overrides the file). An unknown key, in the file
 * or in the context, fails with the key and the closest known one; so does a bad value.
 */
export function loadDeploySettings(node: Node, cwd = process.cwd()): ResolvedSettings<DeploySettings> {
  const context = node.getAllContext() as Record<string, unknown>;
  const file = typeof context.settings === 'string' && context.settings !== '' ? context.settings : undefined;
  const fromFile = file ? readSettingsFile(file, cwd) : {};
  const unknown = Object.keys(context).filter((key) => !isForeignContextKey(key) && !KNOWN.includes(key));
  if (unknown.length > 0)
    throw new ConfigError(unknown.map((key) => unknownKey(key, 'invalid context', KNOWN)).join('; '));
  const fromContext: Record<string, unknown> = {};
  for (const key of KNOWN) {
    const value = context[key];
    if (value !== undefined && value !== '') fromContext[key] = value;
  }
  // Each source is checked alone first, so an error names where the bad key or value came from.
  if (file) parseWith(DeploySettingsSchema.partial(), fromFile, `invalid settings in ${file}`, cwd);
  const where = file
    ? Object.keys(fromContext).length > 0
      ? `invalid settings (${file} and context)`
      : `invalid settings in ${file}`
    : 'invalid context';
  return resolved(parseWith(DeploySettingsSchema, { ...fromFile, ...fromContext }, where, cwd), where);
}

/*
 * The accounts file (docs/accounts.md): `{ "accounts": [ { "name": "brand-a", … } ] }`. Each account
 * is checked by the settings schema above, narrowed to what one account may set for itself; a key
 * of the whole deployment (schedule, opsEmails, …) is refused as such, any other unknown key with
 * the closest account key.
 */

/** The settings an account sets for itself: what its scan reads, and who gets its alerts. */
const ACCOUNT_OVERRIDES = [...ACCOUNT_SCAN_SETTINGS, 'alertEmails', 'alertSmsNumbers'] as const;

/** What `apiKeyEnv` may not name, in any case (Windows reads `link_signing_key` as LINK_SIGNING_KEY): its
 * value goes to the reseller, so sentinel's own secrets or AWS's would reach whichever host the file names. */
const OWN_VARIABLES = new Set<string>(Object.values(ENV).filter((name) => name !== ENV.resellerApiKey));
const notAnAccountKey = (name: string): boolean =>
  /^AWS_/i.test(name) || OWN_VARIABLES.has(name.toUpperCase());

/** An environment variable's name, as `apiKeyEnv` names where the command line finds the key. */
const environmentVariable = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name such as BRAND_A_KEY')
  .refine(
    (name) => !notAnAccountKey(name),
    "must name a variable of the account's key alone, such as BRAND_A_KEY: not one of sentinel's own settings or secrets (LINK_SIGNING_KEY, HEARTBEAT_URL, …) nor AWS_…, whose value would be sent to the reseller as the key",
  );

/** One account of the accounts file, with only the keys it set (defaults are the deployment's). */
export const AccountSettingsSchema = SentinelSettingsSchema.pick(
  Object.fromEntries(ACCOUNT_OVERRIDES.map((key) => [key, true])) as {
    [K in (typeof ACCOUNT_OVERRIDES)[number]]: true;
  },
)
  .partial()
  .extend({
    // The command line's rule (http to this machine too), so a file of simulators works on a
    // laptop; a deployment asks https of it (parseWith), as of its own.
    resellerBaseUrl: SETTINGS.resellerBaseUrl.schema.optional(),
    name: accountName,
    /** Where the command line reads the account's API key. */
    apiKeyEnv: environmentVariable.optional(),
    /** The SSM SecureString the stack reads the account's API key from. */
    apiKeyParameter: ssmParameterName.optional(),
  })
  .strict();

/** The keys an account may have. */
export const ACCOUNT_KEYS: readonly string[] = Object.keys(AccountSettingsSchema.shape);

/** One account as the accounts file sets it: its name, where its key is, and its own settings. */
export interface AccountSettings {
  /** Unique, 1 to 32 of a-z, 0-9 and "-": it appears in URLs, metric dimensions and message attributes. */
  readonly name: string;
  /** Where the command line reads the account's API key. @default - the command line cannot scan it */
  readonly apiKeyEnv?: string;
  /** The SSM SecureString the stack reads the account's API key from; required to deploy. */
  readonly apiKeyParameter?: string;
  /** @default - the deployment's */
  readonly resellerBaseUrl?: string;
  /** @default - the deployment's */
  readonly expiryDays?: number;
  /** @default - the deployment's */
  readonly criticalDays?: number;
  /** @default - the deployment's */
  readonly minSeverity?: Severity;
  /** Zone of the dates in this account's alerts (the schedule stays the deployment's). @default - the deployment's */
  readonly timeZone?: string;
  /** Name shown in this account's subject, digest and SMS. @default - the account's name */
  readonly accountLabel?: string;
  /** @default - the deployment's */
  readonly quarantineDays?: string;
  /** Who gets this account's alerts only (a subscription filtered on its `account` attribute). @default - none */
  readonly alertEmails?: readonly string[];
  /** Who gets this account's critical SMS only. @default - none */
  readonly alertSmsNumbers?: readonly string[];
  /** The account's own policies per domain group, instead of the deployment's. @default - the deployment's */
  readonly policies?: Policies;
}

/** Reads a JSON file whose top level must be `shape` (an object); the errors name the file. */
function readJsonObject(
  path: string,
  cwd: string,
  what: string,
  shape = 'a JSON object, e.g. {"accounts": [{"name": "brand-a", "apiKeyEnv": "BRAND_A_KEY"}]}',
): Record<string, unknown> {
  let text: string;
  try {
    text = readRegularFileSync(resolve(cwd, path), MAX_CONFIG_FILE_BYTES);
  } catch (error) {
    throw new ConfigError(
      `${what} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      { cause: error },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${what} ${path} is not JSON (${notJsonReason(error)})`, { cause: error });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ConfigError(`${what} ${path} must hold ${shape}`);
  const twice = duplicateKey(text);
  if (twice !== null) throw new ConfigError(`${what} ${path} ${twiceWords(twice)}`);
  return value as Record<string, unknown>;
}

/**
 * Reads and checks an accounts file: `{ "accounts": [ … ] }`, resolved from `cwd`. The errors
 * name the file, the account and the key.
 */
export function readAccountsFile(path: string, cwd = process.cwd()): AccountSettings[] {
  const file = readJsonObject(path, cwd, 'accounts file');
  const where = `accounts file ${path}`;
  const problems = Object.keys(file)
    .filter((key) => key !== 'accounts')
    .map((key) =>
      KNOWN.includes(key) || ACCOUNT_KEYS.includes(key)
        ? `${where}: ${key} belongs inside an account (or in the settings), not beside "accounts"`
        : `${where}: unknown key ${key}; did you mean accounts?`,
    );
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return parseAccounts(file.accounts, where);
}

/**
 * Checks a list of accounts (an accounts file's, or the `accounts` prop): each account with the
 * schema, then across them: unique names, and no key read by two accounts.
 */
export function parseAccounts(value: unknown, where: string): AccountSettings[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new ConfigError(
      `${where}: accounts must be a list of at least one account, e.g. [{"name": "brand-a", "apiKeyEnv": "BRAND_A_KEY"}]`,
    );
  if (value.length > MAX_ACCOUNTS)
    throw new ConfigError(
      `${where}: ${value.length} accounts; one deployment scans at most ${MAX_ACCOUNTS} (docs/accounts.md): split them over two deployments`,
    );
  const problems: string[] = [];
  const accounts: AccountSettings[] = [];
  for (const [index, entry] of value.entries()) {
    const name =
      entry && typeof entry === 'object' && typeof (entry as { name?: unknown }).name === 'string'
        ? (entry as { name: string }).name
        : undefined;
    const at = `${where}: account ${name && name.length <= 40 ? `${JSON.stringify(name)} ` : ''}(accounts[${index}])`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`${at} must be an object with at least a name`);
      continue;
    }
    const parsed = AccountSettingsSchema.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.code === 'unrecognized_keys')
          for (const key of issue.keys)
            problems.push(
              KNOWN.includes(key)
                ? `${at}: ${key} is a setting of the whole deployment, not of one account; set it beside "accounts" in the settings`
                : `${at}: unknown setting ${key}; did you mean ${closestSetting(key, ACCOUNT_KEYS)}?`,
            );
        else problems.push(`${at}: ${String(issue.path[0] ?? 'account')} ${issue.message}`);
      }
      continue;
    }
    // Only what the account set: the schema's defaults are the deployment's business, not the account's.
    const own = Object.fromEntries(
      Object.entries(parsed.data).filter(([key]) => key in (entry as object)),
    ) as unknown as AccountSettings;
    accounts.push(own);
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  const twice = (key: 'name' | 'apiKeyEnv' | 'apiKeyParameter', what: string) => {
    const first = new Map<string, string>();
    for (const account of accounts) {
      const v = account[key];
      if (v === undefined) continue;
      const earlier = first.get(key === 'apiKeyEnv' ? v.toUpperCase() : v);
      if (earlier !== undefined)
        problems.push(
          key === 'name'
            ? `${where}: two accounts are named ${v}; each name must be unique`
            : `${where}: accounts ${earlier} and ${account.name} both ${what} ${v}; each account has its own key`,
        );
      else first.set(key === 'apiKeyEnv' ? v.toUpperCase() : v, account.name);
    }
  };
  twice('name', '');
  twice('apiKeyEnv', 'read their key from');
  twice('apiKeyParameter', 'read their key from');
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return accounts;
}

/** Settings with `key` replaced by what `read` makes of it; an empty `key` (undefined or '') is left out. */
function withKeyRead(raw: unknown, key: string, read: (value: unknown) => unknown): unknown {
  if (raw === null || typeof raw !== 'object' || !(key in raw)) return raw;
  const { [key]: value, ...rest } = raw as Record<string, unknown>;
  if (value === undefined || value === '') return rest;
  return { ...raw, [key]: read(value) };
}

/** Settings with `accounts` read (a path becomes the file's checked accounts, a list is checked). */
function withAccountsRead(raw: unknown, where: string, cwd: string): unknown {
  return withKeyRead(raw, 'accounts', (value) =>
    typeof value === 'string' ? readAccountsFile(value, cwd) : parseAccounts(value, `${where}: accounts`),
  );
}

/** The most characters of policies the functions' environment takes (Lambda holds 4 KB of it in all). */
export const POLICIES_ENVIRONMENT_MAX = 2_048;

/**
 * Settings with `policies` read: a path becomes the file's JSON (checked by the schema after), an
 * object stays as it is.
 */
function withPoliciesRead(raw: unknown, where: string, cwd: string): unknown {
  return withKeyRead(raw, 'policies', (value) =>
    typeof value === 'string' ? readJsonObject(value, cwd, `${where}: policies file`) : value,
  );
}
