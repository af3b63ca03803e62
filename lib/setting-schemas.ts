import * as z from 'zod';
import { parseWebhookSpec } from '../functions/core/alerts/webhook-delivery';
import { SETTINGS } from '../functions/core/scan/config';
import { type Policies, parsePolicies } from '../functions/core/scan/policies';

/**
 * The shapes lib/config.ts builds the deployment's settings from: lists from `-c a,b`, flags and
 * amounts from text, ids and ARNs, each checked with the functions' own parser where they have one.
 */

export const list = <T extends z.ZodType<string>>(item: T) =>
  z.preprocess((value) => {
    // `-c alertEmails=a@x.nl,b@x.nl` arrives as one string; a settings file or props hold an array.
    if (typeof value === 'string')
      return value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    return value;
  }, z.array(item).default([]));

/** true/false from a settings file or props, "true"/"false" from `-c key=value`. */
export const flag = z.preprocess(
  (value) => (value === 'true' ? true : value === 'false' ? false : value),
  z.boolean({ error: 'must be true or false' }),
);

/** An amount in US dollars, from a string (`-c`) or a number. */
export const dollars = z.preprocess(
  (value) => (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value),
  z
    .number({ error: 'must be an amount in USD such as 0.8' })
    .positive('must be an amount in USD above 0')
    .max(100_000, 'must be at most 100000 USD'),
);

/**
 * Policies per domain group (docs/policies.md), as a settings file or an accounts file holds them:
 * the object, checked with the scan's own parser. A path (`-c policies=FILE`) is read before.
 */
export const policiesObject = z.unknown().transform((value, ctx): Policies => {
  try {
    return parsePolicies(value, 'is invalid');
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** A `FORMAT:/ssm/parameter` entry of `webhooks`, checked with the function's own parser. */
export const webhookEntry = z.string().superRefine((text, ctx) => {
  try {
    parseWebhookSpec(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/** A Microsoft Entra id (team, tenant): a GUID. */
export const guid = (what: string) =>
  z
    .string()
    .regex(
      /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
      `must be the ${what}, a GUID`,
    );

/**
 * A reseller base URL a deployment may call: the command line's rule, and https only (a Lambda has
 * no simulator on its loopback). The deployment's own and every account's.
 */
export const deployedResellerBaseUrl = SETTINGS.resellerBaseUrl.schema.refine(
  (u) => u.startsWith('https://'),
  'must be an https URL: the API key travels in its requests',
);

/**
 * A regional AWS WAF web ACL (`wafv2` with the `regional` scope: a REST API stage takes no
 * CloudFront one), as the console's ARN column and `aws wafv2 list-web-acls --scope REGIONAL` give it;
 * or, from code, the unresolved ARN of a web ACL the same app creates (`acl.attrArn`: CDK's string
 * token, `${Token[...]}`, read without aws-cdk-lib, which the command line does not bundle).
 */
export const webAclArn = z
  .string()
  .trim()
  .refine(
    (arn) =>
      arn.includes('${Token[') ||
      /^arn:aws[a-z-]{0,20}:wafv2:[a-z0-9-]{1,30}:\d{12}:regional\/webacl\/[\w-]{1,128}\/[0-9a-f-]{36}$/.test(
        arn,
      ),
    'must be the ARN of a regional AWS WAF web ACL, such as arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/NAME/ID (aws wafv2 list-web-acls --scope REGIONAL)',
  );
