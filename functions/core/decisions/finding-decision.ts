import { normalizeDomainName } from '../base/text';
import type { DomainFinding } from '../findings/classify';
import { checkActingLink, type GateRefusalKind, keyReadRefusal } from '../links/link-gate';
import { type ActingAction, type SigningKey, signLinkQuery } from '../links/links';
import { cannotBeSilenced } from '../memory/actions';
import { DamagedReportError } from '../memory/report-store';
import { type KeptQuarantine, keptQuarantineWords } from './action-decision';

/**
 * The finding page, decided without I/O: the one link an alert gives a finding. A valid link shows
 * the domain's finding as the latest report has it, its next step, and links to act on it (restore
 * for quarantine; snooze and acknowledge with a state store), each signed here to expire with this
 * link and each opening its own confirmation page. GET and HEAD only: the page changes nothing.
 */

export interface FindingPageInput {
  readonly method: string;
  /** As it arrived in the path, decoded; validated before anything else. */
  readonly domain: string;
  readonly token: Readonly<Record<string, string | undefined>>;
  /** Epoch ms. */
  readonly now: number;
  readonly signingKeys: () => Promise<readonly SigningKey[]>;
  /**
   * The domain's finding in the latest report (and that report's time), or the quarantine memory
   * keeps while its record gives no finding (the report's problem record marked `kept_quarantine`);
   * read once the link is proven.
   */
  readonly findFinding: (
    name: string,
  ) => Promise<
    { finding: DomainFinding; reportNow: string } | (KeptQuarantine & { reportNow: string }) | null
  >;
  /** Snooze and acknowledge can be offered: a state store keeps them. */
  readonly silencing: boolean;
}

/** Links from the page, relative to its own URL, per action. */
export type FindingLinks = Partial<Record<ActingAction, string>>;

export type FindingPageOutcome =
  | {
      readonly kind: 'show';
      readonly status: 200;
      readonly finding: DomainFinding;
      readonly reportNow: string;
      readonly links: FindingLinks;
      /** Epoch ms the page's links expire (with the link that opened it). */
      readonly linksExpire: number;
      /** Why snooze and acknowledge are not offered, when they are not. */
      readonly noSilence?: string;
    }
  | {
      /** `kept_quarantine`: no finding as the record reads, and a quarantine in memory: what to do, nothing offered. */
      readonly kind:
        | GateRefusalKind
        | 'no_finding'
        | 'kept_quarantine'
        | 'report_unreadable'
        | 'store_failed';
      readonly status: number;
      readonly title: string;
      readonly message: string;
      readonly detail?: string;
    };

const GENERIC_FAILURE =
  'This service is not configured correctly. The operator has been told; please try again later.';

/** Decides what a request to a finding link answers. Never throws. */
export async function decideFindingPage(input: FindingPageInput): Promise<FindingPageOutcome> {
  const method = input.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD')
    return {
      kind: 'method_not_allowed',
      status: 405,
      title: 'Not allowed',
      message: 'This page is read-only.',
    };
  const gate = await checkActingLink({
    action: 'finding',
    method,
    domain: input.domain,
    token: input.token,
    now: input.now,
    signingKeys: input.signingKeys,
    expiredMessage: `Links in an alert are valid for a limited time. Use the link in the latest alert about ${input.domain}.`,
    invalidMessage:
      'The link was changed, or is for another domain. Use the link from the alert exactly as sent.',
    unavailableMessage: GENERIC_FAILURE,
  });
  if (!gate.ok) return gate.refusal;
  let found: Awaited<ReturnType<FindingPageInput['findFinding']>>;
  try {
    found = await input.findFinding(normalizeDomainName(input.domain));
  } catch (error) {
    const damaged = error instanceof DamagedReportError;
    return {
      kind: damaged ? 'report_unreadable' : 'store_failed',
      status: 503,
      title: 'The latest report could not be read',
      message: damaged
        ? 'The latest report could not be read; the next scan writes a new one.'
        : 'The report could not be read. Please try again in a few minutes.',
      detail: `${(error as Error).name}: ${(error as Error).message}`,
    };
  }
  if (!found)
    return {
      kind: 'no_finding',
      status: 200,
      title: `Nothing to do for ${input.domain}`,
      message: `The latest report has nothing about ${input.domain}: it was renewed, restored or left the account since the alert. The full report shows the rest.`,
    };
  // The same answer as the domain's snooze and acknowledge links give (action-decision.ts).
  if ('keptQuarantine' in found)
    return {
      kind: 'kept_quarantine',
      status: 200,
      ...keptQuarantineWords(
        input.domain,
        found.keptQuarantine.restore_by,
        input.now,
        found.keptQuarantine.snoozed_until,
      ),
    };
  let keys: readonly SigningKey[];
  try {
    keys = await input.signingKeys();
  } catch (error) {
    return keyReadRefusal(error, GENERIC_FAILURE);
  }
  return { kind: 'show', status: 200, ...found, ...pageLinks(input, found.finding, keys, gate.exp) };
}

/** The acting links the page offers, signed to expire with the finding link (`exp`). */
function pageLinks(
  input: FindingPageInput,
  finding: DomainFinding,
  keys: readonly SigningKey[],
  exp: number,
) {
  const ttlSeconds = Math.max(1, exp - Math.floor(input.now / 1000));
  const domain = normalizeDomainName(finding.domain_name);
  const link = (action: ActingAction) =>
    `../${action}/${encodeURIComponent(domain)}?${signLinkQuery({
      action,
      subject: domain,
      ...(action === 'restore' ? {} : { finding: { kind: finding.kind, severity: finding.severity } }),
      keys,
      now: input.now,
      ttlSeconds,
    })}`;
  const links: FindingLinks = {};
  if (finding.kind === 'quarantine') links.restore = link('restore');
  let noSilence: string | undefined;
  if (!input.silencing)
    noSilence =
      'Snooze and acknowledge need a state store (STATE, or the stack’s table); none is configured.';
  else if (cannotBeSilenced(finding))
    noSilence =
      'It is in its last days to restore: alerts about it repeat daily and cannot be snoozed or acknowledged.';
  else {
    links.snooze = link('snooze');
    links.acknowledge = link('acknowledge');
  }
  return {
    links,
    linksExpire: ttlSeconds * 1000 + Math.floor(input.now / 1000) * 1000,
    ...(noSilence ? { noSilence } : {}),
  };
}
