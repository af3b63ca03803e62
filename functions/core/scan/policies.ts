import { domainToUnicode } from 'node:url';
import * as z from 'zod';
import { ConfigError } from '../base/errors';
import { duplicateKey, notJsonReason, twiceWords } from '../base/json';
import { closest } from '../base/suggest';
import { normalizeDomainName } from '../base/text';
import { type ClassifyPolicy, type DomainFinding, SEVERITIES, type Severity } from '../findings/classify';
import type { Domain } from '../reseller/schemas';

/**
 * Policies per domain group (docs/policies.md): the first policy whose `match` fits a domain sets
 * that domain's thresholds, the severity at which it is worth an alert, whether it is let lapse, and
 * who besides the deployment's recipients gets its alerts. A domain no policy fits keeps the
 * deployment's settings. Pure: parsing, checking and matching, no I/O (the command line reads the
 * file, the stack passes the JSON in POLICIES).
 *
 * `escalation` (with the memory between scans, functions/core/memory/escalation.ts) publishes
 * again, with the `escalation` message attribute, a critical finding nobody acted on; `repeat`, at
 * the top (the deployment's) and per policy, sets how often an ongoing finding is published again
 * and how many times at most (functions/core/memory/repeat.ts).
 */

/** The most policies one file holds: each group with recipients is a subscription per recipient. */
export const MAX_POLICIES = 50;

/**
 * A policy's name: it becomes the `group` message attribute, subscription filter policies, the
 * report's `policy` of a finding and a subject's label, so the shape of an account's name.
 */
const NAME_SHAPE = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** The words of a value that is not the object it must be (other issues keep their own). */
const objectError = (example: string) => (issue: { readonly code: string }) =>
  issue.code === 'invalid_type' ? `must be an object such as ${example}` : undefined;

/** An issue's place as the messages write it: `escalation.alertEmails[1]`. */
const placeOf = (path: readonly PropertyKey[]): string =>
  path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');

/** The words of a list over its limit: `must list at most 100 tags`. */
const atMost = (max: number, what: string) => `must list at most ${max} ${what}`;

const whole = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.number({ error: message }).int(message).min(min, message).max(max, message);
};

/** A tag as a policy names it: compared without regard to case or surrounding white space. */
const tag = z
  .string({ error: 'must be text' })
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters');

/** A TLD (`nl`, `co.uk`), with or without its leading dot, in any case; IDN TLDs as Unicode or punycode. */
const tld = z
  .string({ error: 'must be text' })
  .trim()
  .transform((text) => normalizeDomainName(text.replace(/^\./, '')))
  .refine(
    (text) => /^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})*$/.test(text),
    'must be a TLD such as nl or co.uk (letters, digits, "-" and dots)',
  );

/**
 * A name pattern: `*` any run of characters (dots too), `?` one character; the rest as in a domain
 * name: letters, digits and marks (a Devanagari, Tamil or Thai vowel sign, a virama: IDNs write
 * them), the joiners IDNA allows in context (U+200C, U+200D), `-` and dots.
 */
const namePattern = z
  .string({ error: 'must be text' })
  .trim()
  // Composed (NFC) as IDNA gives a name's Unicode form: `u` + U+0308 and `ü` are one name.
  .transform((text) => text.normalize('NFC').toLowerCase().replace(/\.$/, ''))
  .refine((text) => text.length <= 253, 'must be at most 253 characters, as a domain name is')
  .refine(
    // One message a pattern: one too long is said so above, not said to hold what it does not.
    (text) => text.length > 253 || /^(?:[\p{L}\p{M}\p{N}*?.-]|\u200c|\u200d)+$/u.test(text),
    'must be a domain name pattern such as *.shop.example (letters, digits, "-", ".", "*" and "?")',
  );

const e164 = z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be E.164 phone numbers such as +31612345678');
/** `FORMAT:/ssm/parameter` as the deployment's `webhooks` take it (functions/core/alerts/webhook-delivery.ts). */
const webhook = z
  .string()
  .regex(
    /^(slack|teams|json):\/[A-Za-z0-9_.\-/]{1,1010}$/,
    'must be FORMAT:/ssm/parameter/name with FORMAT one of slack, teams, json, e.g. slack:/domain-sentinel/vip-slack',
  );

/** The largest cap a policies file may set; a domain's memory counts repeats up to it. */
export const MAX_REPEAT_CAP = 1000;

/**
 * The words a repeat cadence may be given in, as hours: a day or a week less 4 hours, so that a scan
 * scheduled daily (or weekly) that runs a little late still repeats on its day, not the next.
 */
export const REPEAT_WORDS = { daily: 20, weekly: 164 } as const;

const CADENCE_MESSAGE = 'must be "daily", "weekly" or a whole number of hours from 1 to 8760';
/** A repeat cadence: `daily`, `weekly` or hours, read as hours. */
const cadence = z.preprocess(
  (v) =>
    typeof v === 'string' && Object.hasOwn(REPEAT_WORDS, v)
      ? REPEAT_WORDS[v as keyof typeof REPEAT_WORDS]
      : v,
  z
    .number({ error: CADENCE_MESSAGE })
    .int(CADENCE_MESSAGE)
    .min(1, CADENCE_MESSAGE)
    .max(8760, CADENCE_MESSAGE),
);

/** `repeat`: how often an ongoing finding is published again, by severity, and at most how many times. */
const RepeatSchema = z.strictObject(
  {
    critical: cadence.optional(),
    warning: cadence.optional(),
    cap: whole(0, MAX_REPEAT_CAP).optional(),
  },
  { error: objectError('{"critical": "daily", "warning": "weekly"}') },
);

const MatchSchema = z
  .strictObject({
    tags: z.array(tag).min(1, 'must list at least one tag').max(100, atMost(100, 'tags')).optional(),
    tlds: z.array(tld).min(1, 'must list at least one TLD').max(100, atMost(100, 'TLDs')).optional(),
    names: z
      .array(namePattern)
      .min(1, 'must list at least one pattern')
      .max(100, atMost(100, 'patterns'))
      .optional(),
  })
  .refine((m) => m.tags || m.tlds || m.names, 'must name tags, tlds or names');

const PolicySchema = z.strictObject({
  name: z
    .string({ error: 'must be a name such as vip' })
    .regex(NAME_SHAPE, 'must be 1 to 32 of a-z, 0-9 and "-", starting with a letter or digit'),
  match: MatchSchema,
  expiryDays: whole(1, 3650).optional(),
  criticalDays: whole(0, 3650).optional(),
  alertThresholds: z
    .array(whole(1, 3650))
    .min(1, 'must list at least one day')
    .max(20, atMost(20, 'days'))
    .optional(),
  minSeverity: z.enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` }).optional(),
  letLapse: z.boolean({ error: 'must be true or false' }).optional(),
  alertEmails: z
    .array(z.email('must be e-mail addresses'))
    .max(100, atMost(100, 'e-mail addresses'))
    .optional(),
  alertSmsNumbers: z.array(e164).max(100, atMost(100, 'SMS numbers')).optional(),
  webhooks: z.array(webhook).max(10, atMost(10, 'webhooks')).optional(),
  repeat: RepeatSchema.optional(),
});

/** `escalation`: when a critical finding nobody acted on is published again, and who gets escalations alone. */
const EscalationSchema = z.strictObject(
  {
    afterHours: whole(1, 8760),
    withinDays: whole(1, 3650),
    alertEmails: z
      .array(z.email('must be e-mail addresses'))
      .max(100, atMost(100, 'e-mail addresses'))
      .optional(),
    alertSmsNumbers: z.array(e164).max(100, atMost(100, 'SMS numbers')).optional(),
  },
  { error: objectError('{"afterHours": 24, "withinDays": 7}') },
);

const PoliciesSchema = z.strictObject({
  escalation: EscalationSchema.optional(),
  repeat: RepeatSchema.optional(),
  policies: z
    .array(z.unknown(), {
      error: (issue) =>
        issue.input === undefined
          ? 'is required: the list of policies, e.g. {"policies": [{"name": "vip", "match": {"tags": ["vip"]}}]}'
          : 'must be a list of policies',
    })
    .max(MAX_POLICIES, `must hold at most ${MAX_POLICIES} policies`),
});

/** One policy as its file sets it. */
export type Policy = z.output<typeof PolicySchema>;

/** Escalation as a policies file sets it. */
export type Escalation = z.output<typeof EscalationSchema>;

/** A repeat cadence as a policies file sets it (hours; a key not set is the level above's). */
export type RepeatSetting = z.output<typeof RepeatSchema>;

/** A policies file: the policies, in the order they are tried, escalation, and the deployment's repeat cadence. */
export interface Policies {
  readonly policies: readonly Policy[];
  readonly escalation?: Escalation;
  readonly repeat?: RepeatSetting;
}

/** How often an ongoing finding is published again, in hours by severity, and at most how many times. */
export interface Repeat {
  readonly critical: number;
  readonly warning: number;
  /** At most this many repeats of one finding after its first alert; absent: no cap. */
  readonly cap?: number;
}

/** The cadence when no policies file sets one: critical daily, warning weekly, no cap. */
export const DEFAULT_REPEAT: Repeat = { critical: REPEAT_WORDS.daily, warning: REPEAT_WORDS.weekly };

/**
 * The repeat cadence the policies come to: the deployment's (the top-level `repeat` over
 * `defaults`: DEFAULT_REPEAT, its critical cadence from CRITICAL_REPEAT_HOURS where that is set) and that of each policy that sets one (its `repeat` over the deployment's).
 */
export function resolveRepeat(
  policies: Policies | undefined,
  defaults: Repeat = DEFAULT_REPEAT,
): {
  readonly repeat: Repeat;
  readonly byGroup: ReadonlyMap<string, Repeat>;
} {
  const repeat = repeatOver(defaults, policies?.repeat);
  const own = (policies?.policies ?? []).filter((p) => p.repeat);
  return { repeat, byGroup: new Map(own.map((p) => [p.name, repeatOver(repeat, p.repeat)])) };
}

/** A cadence with the keys `over` sets taken over `base`'s. */
function repeatOver(base: Repeat, over: RepeatSetting | undefined): Repeat {
  if (!over) return base;
  const cap = over.cap ?? base.cap;
  return {
    critical: over.critical ?? base.critical,
    warning: over.warning ?? base.warning,
    ...(cap === undefined ? {} : { cap }),
  };
}

/** The keys each level of a policies file knows, for "did you mean". */
const KNOWN_KEYS = {
  top: Object.keys(PoliciesSchema.shape),
  escalation: Object.keys(EscalationSchema.shape),
  repeat: Object.keys(RepeatSchema.shape),
  policy: Object.keys(PolicySchema.shape),
  match: ['tags', 'tlds', 'names'],
} as const;

/** The recipients a policy's group sends its own digest to. */
export const hasRecipients = (p: Policy): boolean =>
  Boolean(p.alertEmails?.length || p.alertSmsNumbers?.length || p.webhooks?.length);

function unknownKeys(keys: readonly string[], known: readonly string[], at: string): string[] {
  return keys.map((key) => {
    const near = closest(key, known);
    return `${at}unknown key ${key}; ${near ? `did you mean ${near}?` : `known keys: ${known.join(', ')}`}`;
  });
}

/** Every problem of one policy, each naming its place: `policies[1] ("vip"): criticalDays must be …`. */
function policyProblems(value: unknown, index: number): { policy?: Policy; problems: string[] } {
  const name =
    value && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string'
      ? (value as { name: string }).name.slice(0, 40)
      : undefined;
  const at = `policies[${index}]${name ? ` (${JSON.stringify(name)})` : ''}`;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { problems: [`${at} must be an object with a name and a match`] };
  const parsed = PolicySchema.safeParse(value);
  if (parsed.success) return { policy: parsed.data, problems: [] };
  // A match with a mistyped key also names nothing known: its unknown key says it better.
  const typoInMatch = parsed.error.issues.some(
    (i) => i.code === 'unrecognized_keys' && i.path[0] === 'match',
  );
  const issues = parsed.error.issues.filter(
    (i) => !(typoInMatch && i.code === 'custom' && i.path.length === 1 && i.path[0] === 'match'),
  );
  const problems = issues.flatMap((issue) => {
    const inner = issue.path[0] === 'match' || issue.path[0] === 'repeat' ? issue.path[0] : undefined;
    if (issue.code === 'unrecognized_keys')
      return unknownKeys(
        issue.keys,
        inner ? KNOWN_KEYS[inner] : KNOWN_KEYS.policy,
        `${at}: ${inner ? `${inner}: ` : ''}`,
      );
    return [`${at}: ${placeOf(issue.path) || 'policy'} ${issue.message}`];
  });
  return { problems };
}

/** Checks across policies: unique names, and nothing a let-lapse policy could not use. */
function crossProblems(policies: readonly Policy[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [i, p] of policies.entries()) {
    const at = `policies[${i}] (${JSON.stringify(p.name)})`;
    if (seen.has(p.name)) problems.push(`${at}: two policies are named ${p.name}; each name must be unique`);
    seen.add(p.name);
    if (p.criticalDays !== undefined && p.expiryDays !== undefined && p.criticalDays > p.expiryDays)
      problems.push(
        `${at}: criticalDays (${p.criticalDays}) must not exceed its expiryDays (${p.expiryDays})`,
      );
    if (p.letLapse && (hasRecipients(p) || p.minSeverity !== undefined || p.alertThresholds || p.repeat))
      problems.push(
        `${at}: a letLapse policy sends no alerts, so it takes no recipients, minSeverity, alertThresholds or repeat; remove them, or letLapse`,
      );
  }
  return problems;
}

/**
 * Checks a policies file's JSON value. Every problem is named at once, with its place and, for an
 * unknown key, the closest known one: `policies file p.json: policies[1] ("vip"): unknown key
 * criticalDay; did you mean criticalDays?`.
 */
export function parsePolicies(value: unknown, where: string): Policies {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ConfigError(
      `${where} must be a JSON object such as {"policies": [{"name": "vip", "match": {"tags": ["vip"]}, "criticalDays": 30}]}`,
    );
  const top = PoliciesSchema.safeParse(value);
  if (!top.success)
    throw new ConfigError(
      top.error.issues
        .flatMap((issue) =>
          issue.code === 'unrecognized_keys'
            ? issue.path[0] === 'escalation' || issue.path[0] === 'repeat'
              ? unknownKeys(issue.keys, KNOWN_KEYS[issue.path[0]], `${issue.path[0]}: `)
              : unknownKeys(issue.keys, KNOWN_KEYS.top, '')
            : [`${placeOf(issue.path) || 'policies'} ${issue.message}`],
        )
        .map((p) => `${where}: ${p}`)
        .join('; '),
    );
  const problems: string[] = [];
  const policies: Policy[] = [];
  for (const [i, entry] of top.data.policies.entries()) {
    const one = policyProblems(entry, i);
    problems.push(...one.problems);
    if (one.policy) policies.push(one.policy);
  }
  if (problems.length === 0) problems.push(...crossProblems(policies));
  if (problems.length) throw new ConfigError(problems.map((p) => `${where}: ${p}`).join('; '));
  return {
    policies,
    ...(top.data.escalation ? { escalation: top.data.escalation } : {}),
    ...(top.data.repeat ? { repeat: top.data.repeat } : {}),
  };
}

/** Reads policies from JSON text; a ConfigError names `where` and what is wrong. */
export function parsePoliciesText(text: string, where: string): Policies {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${where} is not JSON (${notJsonReason(error)})`, { cause: error });
  }
  const twice = duplicateKey(text);
  if (twice !== null) throw new ConfigError(`${where} ${twiceWords(twice)}`);
  return parsePolicies(value, where);
}

/** The most characters of policies JSON a scan takes (an account's item carries them too). */
export const POLICIES_MAX_CHARS = 65_536;

/** The POLICIES setting's schema: the policies as JSON text, read into {@link Policies}. */
export const policiesSetting = z
  .string()
  .trim()
  .max(POLICIES_MAX_CHARS, `must be at most ${POLICIES_MAX_CHARS} characters`)
  .transform((text, ctx) => {
    try {
      return parsePoliciesText(text, 'is invalid');
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });

/** What applies to the domains of one group, the deployment's settings filled in. */
export interface ResolvedPolicy {
  readonly policy: Policy;
  /** The rules' thresholds for its domains. */
  readonly classify: ClassifyPolicy;
  /** Its domains are worth an alert from this severity. */
  readonly minSeverity: Severity;
  /** Its repeat cadence (with memory between scans); absent when the policy sets none of its own. */
  readonly repeat?: Repeat;
}

/** What the deployment's own settings are, under the policies. */
export interface PolicyDefaults {
  readonly classify: ClassifyPolicy;
  readonly minSeverity: Severity;
  /** The deployment's critical cadence (CRITICAL_REPEAT_HOURS), under the file's `repeat`. @default 20 */
  readonly criticalRepeatHours?: number;
}

/** Policies ready to match domains, in their order, each with its effective settings. */
export interface PolicySet {
  readonly resolved: readonly ResolvedPolicy[];
  /** The policy of a domain: the first that fits, or undefined (the deployment's settings apply). */
  readonly policyFor: (domain: Pick<Domain, 'domain_name' | 'tags'>) => ResolvedPolicy | undefined;
  /** The policy of a finding by the name it carries. */
  readonly byName: (name: string | undefined) => ResolvedPolicy | undefined;
  /** The widest expiry window of the deployment and every policy: how far ahead a filtered read must list. */
  readonly widestExpiryDays: number;
}

/**
 * True when `name` fits `pattern` (each as its characters): `*` any run of characters (dots too),
 * `?` one. Greedy, stepping back only to the last `*`: at most the product of the two lengths for
 * any pattern, where a regular expression of many `*` backtracks without end on a name that does
 * not fit (`*a*a*a*…*b` against a long run of `a`: a scan that never finished).
 */
export function globMatches(pattern: readonly string[], name: readonly string[]): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === name[n])) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++resume;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** A domain's name in each form a pattern may be written in: as listed, the registry's (punycode), Unicode. */
type NameForms = () => readonly string[];

/** One policy's match as a test of a domain: any of its tags, any of its TLDs, any of its patterns. */
function matcher(policy: Policy): (forms: NameForms, tags: ReadonlySet<string>) => boolean {
  const tags = (policy.match.tags ?? []).map((t) => t.toLowerCase());
  const tlds = (policy.match.tlds ?? []).map((t) => `.${t}`);
  const patterns = (policy.match.names ?? []).map((pattern) => Array.from(pattern));
  const fits = (name: string) => {
    const chars = Array.from(name);
    return patterns.some((pattern) => globMatches(pattern, chars));
  };
  return (forms, domainTags) =>
    tags.some((t) => domainTags.has(t)) ||
    (tlds.length > 0 && forms().some((name) => tlds.some((t) => name.endsWith(t)))) ||
    (patterns.length > 0 && forms().some(fits));
}

/** The forms of a name, made once and only when a TLD or a pattern asks. */
function nameForms(domainName: string): NameForms {
  let forms: readonly string[] | undefined;
  return () => {
    if (forms) return forms;
    const name = domainName.toLowerCase().replace(/\.$/, '');
    const ascii = normalizeDomainName(name);
    const unicode = ascii.includes('xn--') ? domainToUnicode(ascii) : ascii;
    forms = [...new Set([name, ascii, unicode].filter(Boolean))];
    return forms;
  };
}

const NO_TAGS: ReadonlySet<string> = new Set();

/**
 * Resolves the policies against the deployment's settings: each policy's thresholds over the
 * deployment's, checked together (a policy's criticalDays may not exceed the expiry window it ends
 * up with). Throws ConfigError naming the policy.
 */
export function resolvePolicies(policies: Policies | undefined, defaults: PolicyDefaults): PolicySet {
  const problems: string[] = [];
  const repeats = resolveRepeat(policies, {
    ...DEFAULT_REPEAT,
    critical: defaults.criticalRepeatHours ?? DEFAULT_REPEAT.critical,
  }).byGroup;
  const resolved = (policies?.policies ?? []).map((policy, i): ResolvedPolicy => {
    const expiryDays = policy.expiryDays ?? defaults.classify.expiryDays;
    const criticalDays = policy.criticalDays ?? defaults.classify.criticalDays;
    if (criticalDays > expiryDays)
      problems.push(
        `policies[${i}] (${JSON.stringify(policy.name)}): criticalDays (${criticalDays}) must not exceed the expiry window it applies within (${expiryDays} days${policy.expiryDays === undefined ? ', the deployment’s' : ''})`,
      );
    return {
      policy,
      classify: { ...defaults.classify, expiryDays, criticalDays },
      minSeverity: policy.minSeverity ?? defaults.minSeverity,
      ...(repeats.has(policy.name) ? { repeat: repeats.get(policy.name) } : {}),
    };
  });
  if (problems.length) throw new ConfigError(problems.join('; '));
  const tests = resolved.map((r) => matcher(r.policy));
  const byName = new Map(resolved.map((r) => [r.policy.name, r]));
  return {
    resolved,
    policyFor: (domain) => {
      if (tests.length === 0) return undefined;
      const forms = nameForms(domain.domain_name);
      const tags = domain.tags?.length ? new Set(domain.tags.map((t) => t.toLowerCase())) : NO_TAGS;
      const index = tests.findIndex((fits) => fits(forms, tags));
      return index < 0 ? undefined : resolved[index];
    },
    byName: (name) => (name === undefined ? undefined : byName.get(name)),
    widestExpiryDays: Math.max(defaults.classify.expiryDays, ...resolved.map((r) => r.classify.expiryDays)),
  };
}

/** Marks a finding with the group it belongs to, and as let lapse when its policy says so. */
export function markFinding(finding: DomainFinding, policy: ResolvedPolicy | undefined): DomainFinding {
  if (!policy) return finding;
  finding.policy = policy.policy.name;
  if (policy.policy.letLapse) finding.let_lapse = true;
  return finding;
}

/** What the report says of the policies that applied: each group's effective settings. */
export interface ReportPolicy {
  readonly name: string;
  readonly expiry_days: number;
  readonly critical_days: number;
  readonly min_severity: Severity;
  readonly let_lapse?: true;
  /** The days-left rungs its domains are alerted again at (with memory between scans). */
  readonly alert_thresholds?: readonly number[];
  /** Its repeat cadence, when it sets one: hours by severity, and the cap (with memory between scans). */
  readonly repeat?: Repeat;
}

/** The report's `policy.policies`: what applied to each group, in the order they are tried. */
export const reportPolicies = (set: PolicySet): ReportPolicy[] =>
  set.resolved.map((r) => ({
    name: r.policy.name,
    expiry_days: r.classify.expiryDays,
    critical_days: r.classify.criticalDays,
    min_severity: r.minSeverity,
    ...(r.policy.letLapse ? { let_lapse: true as const } : {}),
    ...(r.policy.alertThresholds
      ? { alert_thresholds: [...new Set(r.policy.alertThresholds)].sort((a, b) => b - a) }
      : {}),
    ...(r.repeat ? { repeat: r.repeat } : {}),
  }));
