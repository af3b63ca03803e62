import {
  GetParameterCommand,
  InternalServerError,
  ParameterNotFound,
  SSMClient,
  SSMServiceException,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SsmSecretSource } from '../../functions/aws/secrets';
import { decideAction } from '../../functions/core/decisions/action-decision';
import { decideFindingPage } from '../../functions/core/decisions/finding-decision';
import { decideView } from '../../functions/core/decisions/view-decision';
import { checkActingLink } from '../../functions/core/links/link-gate';
import {
  ACCOUNT_SUBJECT,
  parseSigningKeys,
  type SigningKey,
  signLink,
} from '../../functions/core/links/links';
import { MemoryActionStore } from '../support/memory-action-store';
import { domainFinding, NOW_ISO } from '../support/report';

/*
 * A signing key that cannot be read for now (the call timed out, SSM throttled or failed, the
 * network) answers 503, try again; one that cannot be read at all (access denied, no such
 * parameter, none configured) answers 500, not configured correctly. The same in each of the four
 * places that read the key: the acting links' gate, an action's fresh links, the report view and
 * the finding page. The failures come through the real SsmSecretSource, as the web function reads.
 */

const ssm = mockClient(SSMClient);
const NOW = Date.parse(NOW_ISO);
const SECRET = 'k'.repeat(40);
const keys = parseSigningKeys(SECRET);
const meta = { $metadata: { httpStatusCode: 500 } };
const serviceError = (name: string, status: number) =>
  new SSMServiceException({ name, $fault: 'client', message: name, $metadata: { httpStatusCode: status } });

const transient: Array<[string, Error]> = [
  [
    'a call that timed out',
    Object.assign(new Error('a request has exceeded the configured 1000 ms requestTimeout'), {
      name: 'TimeoutError',
    }),
  ],
  ['throttling', serviceError('ThrottlingException', 400)],
  ['a fault of SSM', new InternalServerError({ message: 'internal', ...meta })],
  ['the network', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  [
    'DNS that did not answer',
    Object.assign(new Error('getaddrinfo EAI_AGAIN ssm.eu-west-1.amazonaws.com'), { code: 'EAI_AGAIN' }),
  ],
];
const lasting: Array<[string, Error]> = [
  ['access denied', serviceError('AccessDeniedException', 400)],
  ['no such parameter', new ParameterNotFound({ message: 'not found', $metadata: { httpStatusCode: 400 } })],
  // Codes of the machine, not the network: trying again in a while changes nothing.
  ['a file that is not there', Object.assign(new Error('open /x'), { code: 'ENOENT' })],
  ['a permission of the machine', Object.assign(new Error('open /x'), { code: 'EACCES' })],
];

/** The key as the web function reads it: the first read succeeds, then `error` for the next ones. */
function keysFailingAfter(reads: number, error: Error) {
  let n = 0;
  ssm.on(GetParameterCommand).callsFake(async () => {
    if (n++ < reads) return { Parameter: { Value: SECRET } };
    throw error;
  });
  // No cache: each read asks SSM, as a read after the cache's five minutes does.
  const source = new SsmSecretSource(
    new SSMClient({ region: 'eu-west-1' }),
    { LINK_SIGNING_KEY_PARAMETER: '/ds/key' },
    0,
  );
  return () => source.signingKeys();
}

const tokenOf = (link: string) => Object.fromEntries(new URL(link).searchParams);
const expiring = domainFinding('example.nl', 'expiring', 'warning', 20);

/** Each place that reads the key, answering with its status. */
const places: Array<
  [
    string,
    (signingKeys: () => Promise<readonly SigningKey[]>) => Promise<{ status: number; kind: string }>,
    number,
  ]
> = [
  [
    'the acting gate',
    async (signingKeys) => {
      const gate = await checkActingLink({
        action: 'restore',
        method: 'GET',
        domain: 'example.nl',
        token: tokenOf(
          signLink({
            baseUrl: 'https://x.example',
            action: 'restore',
            subject: 'example.nl',
            keys,
            now: NOW,
          }),
        ),
        now: NOW,
        signingKeys,
        expiredMessage: 'expired',
        invalidMessage: 'invalid',
        unavailableMessage: 'This service is not configured correctly.',
      });
      if (gate.ok) throw new Error('the gate passed');
      return gate.refusal;
    },
    0,
  ],
  [
    'an action with fresh links for a changed finding',
    (signingKeys) =>
      decideAction({
        action: 'snooze',
        method: 'POST',
        domain: 'example.nl',
        token: tokenOf(
          signLink({
            baseUrl: 'https://x.example',
            action: 'snooze',
            subject: 'example.nl',
            finding: { kind: 'expiring', severity: 'warning' },
            keys,
            now: NOW,
          }),
        ),
        form: {},
        now: NOW,
        signingKeys,
        port: async () => ({
          store: new MemoryActionStore(),
          findFinding: async () => ({ ...expiring, kind: 'quarantine', severity: 'critical' }) as never,
        }),
      }),
    1,
  ],
  [
    'the report view',
    (signingKeys) =>
      decideView({
        action: 'report',
        method: 'GET',
        token: tokenOf(
          signLink({
            baseUrl: 'https://x.example',
            action: 'report',
            subject: ACCOUNT_SUBJECT,
            keys,
            now: NOW,
          }),
        ),
        now: NOW,
        signingKeys,
        latestReport: async () => null,
      }),
    0,
  ],
  [
    'the finding page',
    (signingKeys) =>
      decideFindingPage({
        method: 'GET',
        domain: 'example.nl',
        token: tokenOf(
          signLink({
            baseUrl: 'https://x.example',
            action: 'finding',
            subject: 'example.nl',
            keys,
            now: NOW,
          }),
        ),
        now: NOW,
        signingKeys,
        findFinding: async () => ({ finding: expiring, reportNow: NOW_ISO }),
        silencing: true,
      }),
    1,
  ],
];

beforeEach(() => {
  ssm.reset();
});

describe.each(places)('a signing key that cannot be read, in %s', (_place, decide, readsFirst) => {
  it.each(transient)('answers 503 to try again for %s', async (_what, error) => {
    const outcome = await decide(keysFailingAfter(readsFirst, error));
    expect(outcome).toMatchObject({ status: 503, kind: 'secret_unavailable' });
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
  });

  it.each(lasting)('answers 500, not configured correctly, for %s', async (_what, error) => {
    const outcome = await decide(keysFailingAfter(readsFirst, error));
    expect(outcome).toMatchObject({ status: 500, kind: 'misconfigured' });
  });
});
