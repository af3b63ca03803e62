import type { APIGatewayProxyEvent } from 'aws-lambda';
import { EnvSecretSource } from '../../functions/aws/secrets';
import { type LinkFinding, parseSigningKeys, signLink } from '../../functions/core/links/links';
import type { ActionStore } from '../../functions/core/memory/actions';
import type { DomainMemory } from '../../functions/core/memory/state';
import { settingsFromEnv } from '../../functions/core/scan/config';
import { createActionHandler } from '../../functions/handlers/action-handler';

/**
 * The snooze and acknowledge links' handler over a store that records what it is told (`stored`:
 * `snooze <domain> <until>` or `acknowledge <domain>`), settings and secrets from `env`, the
 * reseller answered by `fetch`; `memoryOf`, when given, is the store's memory of a domain.
 */
export function recordingActionHandler(options: {
  env: Record<string, string>;
  fetch: typeof globalThis.fetch;
  memoryOf?: () => Promise<DomainMemory | undefined>;
  clock?: () => number;
}) {
  const { env, fetch, memoryOf, clock } = options;
  const stored: string[] = [];
  const store: ActionStore = {
    location: 'memory',
    snooze: async (name, snooze) => {
      stored.push(`snooze ${name} ${snooze.until}`);
    },
    acknowledge: async (name) => {
      stored.push(`acknowledge ${name}`);
    },
    ...(memoryOf ? { memoryOf } : {}),
  };
  const handle = createActionHandler({
    settings: () => settingsFromEnv(env),
    secrets: new EnvSecretSource(env),
    store: () => store,
    log: () => undefined,
    fetch,
    ...(clock ? { clock } : {}),
  });
  return { handle, stored };
}

/** A POST, as a browser or a client sends it, on the link signed with `signingKey` for `finding` of `domain`. */
export function signedActionPost(options: {
  action: 'snooze' | 'acknowledge';
  domain: string;
  finding: LinkFinding;
  signingKey: string;
  now: number;
  body: string;
  contentType: string;
  accept: string;
}): APIGatewayProxyEvent {
  const url = new URL(
    signLink({
      baseUrl: 'https://x.test/',
      action: options.action,
      subject: options.domain,
      finding: options.finding,
      keys: parseSigningKeys(options.signingKey),
      now: options.now,
    }),
  );
  return {
    httpMethod: 'POST',
    path: url.pathname,
    pathParameters: { domain: options.domain },
    queryStringParameters: Object.fromEntries(url.searchParams),
    headers: { 'Content-Type': options.contentType, Accept: options.accept },
    body: options.body,
    isBase64Encoded: false,
    requestContext: { identity: { sourceIp: '203.0.113.9' } },
  } as unknown as APIGatewayProxyEvent;
}
