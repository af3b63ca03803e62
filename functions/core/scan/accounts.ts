import { createHmac } from 'node:crypto';
import * as z from 'zod';
import { ConfigError } from '../base/errors';
import type { SigningKey } from '../links/links';
import type { SecretSource } from '../links/secrets';
import { type RawSettings, SETTINGS, type SettingName, ssmParameterName } from './config';
import { POLICIES_MAX_CHARS } from './policies';

/**
 * Several reseller accounts in one deployment: how an account is named, what one scan of one
 * account is given (the scan function's input, one Map item of the state machine), and what keeps
 * accounts apart wherever they meet (the state's scope, the report's place, the links' keys).
 */

/** The shape of an account's name. */
const NAME_SHAPE = /^[a-z0-9][a-z0-9-]{0,31}$/;
/** Names Windows keeps for a device: no file or folder there may have one. */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[1-9]|lpt[1-9])$/;

/**
 * An account's name: short, lower case, and safe unchanged in every place it appears (an SNS
 * message attribute, a state partition, a URL path segment, a metric dimension, a file and a
 * folder name). Lower case only, so two names never meet on a file system that ignores case; no
 * name Windows keeps for a device (`con`, `nul`, `com1`, …), which a report folder is named after.
 */
export const ACCOUNT_NAME = {
  test: (name: string): boolean => NAME_SHAPE.test(name) && !WINDOWS_DEVICE.test(name),
} as const;

/** An account's name, checked ({@link ACCOUNT_NAME}). */
export const accountName = z
  .string({ error: 'must be a name such as brand-a' })
  .regex(
    NAME_SHAPE,
    'must be 1 to 32 of a-z, 0-9 and "-", starting with a letter or digit (it appears in URLs, metric dimensions and message attributes)',
  )
  .refine(
    (name) => !WINDOWS_DEVICE.test(name),
    'must not be a name Windows keeps for a device (con, prn, aux, nul, com1-9, lpt1-9): it names a folder',
  );

/** The most accounts one deployment scans (docs/accounts.md says why: one Map's history, its stacks and policies). */
export const MAX_ACCOUNTS = 100;

/**
 * The settings an account may set for itself, over the deployment's (the per-account subset of
 * the settings): what its scan reads and how its alert is written. Recipients are per account too,
 * but they are subscriptions of the stack, not settings of the scan (lib/config.ts).
 */
export const ACCOUNT_SCAN_SETTINGS = [
  'resellerBaseUrl',
  'expiryDays',
  'criticalDays',
  'minSeverity',
  'timeZone',
  'accountLabel',
  'quarantineDays',
  'policies',
] as const satisfies readonly SettingName[];

export type AccountScanSetting = (typeof ACCOUNT_SCAN_SETTINGS)[number];

/** A raw value as an item carries it: text (as from the environment) or a number (as from JSON). */
const rawValue = z.union([z.string().max(2_000), z.number()]);
/** The policies, as JSON text: longer than any other setting, bounded as the setting itself is. */
const rawPolicies = z.string().max(POLICIES_MAX_CHARS);

/** One account's setting, checked with the setting's own schema but kept raw, to be merged like the environment. */
const accountSetting = (name: AccountScanSetting) =>
  (name === 'policies' ? rawPolicies : rawValue).superRefine((value, ctx) => {
    const parsed = SETTINGS[name].schema.safeParse(value);
    if (!parsed.success)
      ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? 'is invalid' });
  });

/**
 * The input of one scan of one account: what the state machine's Map gives each invocation of the
 * scan function, and what the web function knows of each account. It names the account and its
 * key's parameter, and carries only the account's own settings; the state it may use is derived
 * from its name and reseller ({@link accountScope}), never given.
 */
export const AccountScanInputSchema = z
  .object({
    account: accountName,
    apiKeyParameter: ssmParameterName,
    settings: z
      .object(
        Object.fromEntries(ACCOUNT_SCAN_SETTINGS.map((name) => [name, accountSetting(name).optional()])) as {
          [N in AccountScanSetting]: z.ZodOptional<ReturnType<typeof accountSetting>>;
        },
      )
      .strict()
      .default({}),
  })
  .strict();

export type AccountScanInput = z.output<typeof AccountScanInputSchema>;

/** The accounts of a deployment as the web function reads them (`accounts.json` in the report bucket). */
export const AccountDirectorySchema = z
  .object({ accounts: z.array(AccountScanInputSchema).max(MAX_ACCOUNTS) })
  .strict()
  .superRefine((directory, ctx) => {
    const seen = new Set<string>();
    for (const item of directory.accounts) {
      if (seen.has(item.account))
        ctx.addIssue({ code: 'custom', message: `names account ${item.account} twice` });
      seen.add(item.account);
    }
  });

export type AccountDirectory = z.output<typeof AccountDirectorySchema>;

/**
 * What the state machine gives each invocation of the scan function: the account's name, and
 * nothing else. Its key parameter and settings are its item in the deployed `accounts.json`
 * ({@link deployedItem}): the Map's items stay a few bytes each whatever the accounts' policies
 * (Step Functions refuses a state's output over 256 KiB, which 100 accounts' own policies can pass),
 * and an invocation cannot name one account with another's key or settings.
 */
export const AccountScanEventSchema = z.object({ account: accountName }).strict();

/** Why an input is not one account's scan, in one line that names the field; null when it is. */
export function accountInputProblem(value: unknown): string | null {
  const parsed = AccountScanEventSchema.safeParse(value);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  if (!issue) return 'is invalid';
  const where = issue.path.join('.') || 'the input';
  return issue.code === 'unrecognized_keys'
    ? `${where} has unknown field(s) ${issue.keys.join(', ')}`
    : `${where} ${issue.message}`;
}

/**
 * The settings of one account's scan: the deployment's (environment) with the account's own over
 * them. Its alerts are labelled with its own label or its name, never the deployment's label: each
 * subject and SMS names the account it is about.
 */
export function accountRawSettings(
  base: RawSettings,
  input: Pick<AccountScanInput, 'account' | 'settings'>,
): RawSettings {
  const own = Object.fromEntries(
    Object.entries(input.settings)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, String(value)]),
  );
  return { ...base, ...own, accountLabel: own.accountLabel ?? input.account };
}

/**
 * The state scope of a named account: its partition in the state table, and the owner a state file
 * records. A state written without a name keeps the reseller base URL as its scope, so existing
 * states load as they did; a named one can never equal it (it does not start with a scheme), nor
 * another account's (the name has no spaces, so where it ends is known).
 */
export function accountScope(resellerBaseUrl: string, name?: string): string {
  return name === undefined ? resellerBaseUrl : `account ${name} at ${resellerBaseUrl}`;
}

/** Where an account's reports are kept in the report bucket or folder. */
export const accountReportPrefix = (name: string): string => `accounts/${name}/`;

/** The object (or file) of the report bucket that lists the deployment's accounts for the web function. */
export const ACCOUNT_DIRECTORY_KEY = 'accounts.json';

/** The base of an account's links: its report page, calendar feed and acting links live under it. */
export const accountLinkBase = (linkBaseUrl: string, name: string): string =>
  `${linkBaseUrl.replace(/\/+$/, '')}/accounts/${name}`;

/** The overview page of every account. */
export const overviewLinkPath = 'accounts';

/** Derives a key for one purpose from each signing key; the id stays the key's own, so a rotation works as before. */
function derive(keys: readonly SigningKey[], purpose: string): SigningKey[] {
  return keys.map((key) => ({
    id: key.id,
    secret: createHmac('sha256', key.secret).update(`domain-sentinel link key\n${purpose}`).digest(),
  }));
}

/**
 * The keys an account's links are signed and checked with: derived from the deployment's signing
 * keys and the account's name. A link made for one account does not verify as another's (the path
 * names the account; changing it changes the key), so it cannot open another account's report or
 * act on its domains, and one signing key serves every account.
 */
export const accountSigningKeys = (keys: readonly SigningKey[], name: string): SigningKey[] =>
  derive(keys, `account\n${name}`);

/** The keys of the overview page's link: neither an account's nor the deployment's own. */
export const overviewSigningKeys = (keys: readonly SigningKey[]): SigningKey[] => derive(keys, 'overview');

/** The environment of a scan function that scans accounts of an accounts file only. */
export const ACCOUNT_ENV = {
  /** `true`: every invocation must name its account (the state machine's items); none scans the deployment's own key. */
  accountsOnly: 'ACCOUNTS_ONLY',
} as const;

/** True when an invocation's event is one account's scan (it has an `account`), to be checked in full. */
export const isAccountEvent = (event: unknown): boolean =>
  event !== null && typeof event === 'object' && !Array.isArray(event) && 'account' in event;

/** What the overview page shows of an account: its last completed scan, in a few numbers. */
export const AccountSummarySchema = z.object({
  account: accountName,
  label: z.string().max(40).optional(),
  generated_at: z.string().max(40),
  /** `critical`: the critical items its alert counted (alerts/alert.ts criticalCount), not its critical findings alone. */
  summary: z.object({ critical: z.number(), warning: z.number(), info: z.number() }),
  problems: z.number(),
  domains_scanned: z.number(),
  /** The scan could not read the whole account (its report's `source.incomplete`): its counts are of what it read. */
  incomplete: z.literal(true).optional(),
});

export type AccountSummary = z.output<typeof AccountSummarySchema>;

/** The object (or file) beside an account's latest report that holds its summary. */
export const ACCOUNT_SUMMARY_KEY = 'summary.json';

/** Where the overview reads each account's summary and the web function the deployment's accounts. */
export interface AccountSummaryStore {
  put(summary: AccountSummary): Promise<void>;
  /** The account's summary, or null before its first completed scan. */
  get(account: string): Promise<AccountSummary | null>;
}

/**
 * An account's secrets: its own API key (from `source`, which reads the account's parameter or
 * variable) and the deployment's signing keys derived for the account ({@link accountSigningKeys}).
 */
export function accountSecrets(source: SecretSource, name: string): SecretSource {
  return {
    apiKey: () => source.apiKey(),
    signingKeys: async () => accountSigningKeys(await source.signingKeys(), name),
    hasSigningKeys: () => source.hasSigningKeys(),
  };
}

/**
 * The deployment's item of the account an input names (its `accounts.json`, written at deploy):
 * IAM lets the one scan function read every account's key, so an invocation names an account and
 * never a key parameter or settings. An account the deployment does not have is refused.
 */
export function deployedItem(account: string, directory: AccountDirectory): AccountScanInput {
  const deployed = directory.accounts.find((item) => item.account === account);
  if (!deployed)
    throw new ConfigError(
      `refused the scan of account ${account}: the deployment's accounts (${ACCOUNT_DIRECTORY_KEY} in the report bucket) have no account of that name; only the state machine's items are scanned`,
    );
  return deployed;
}

/** Checks one account's scan input; the error names the field and says where inputs come from. */
export function parseAccountInput(value: unknown): { readonly account: string } {
  const problem = accountInputProblem(value);
  if (problem)
    throw new ConfigError(
      `the scan's input is not one account's scan: ${problem}; the state machine gives each scan {"account": NAME}`,
    );
  return AccountScanEventSchema.parse(value);
}
