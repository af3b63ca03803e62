import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseSigningKeys } from '../../functions/core/links/links';
import { createFindingHandler } from '../../functions/handlers/web-handler';

/**
 * Found by a review: the finding page logged the domain of its path as it came. The path is the
 * caller's text: every acting link logs it made safe (requestLogFields, safeText), but a finding
 * link's log line carried a bidi override or a line separator raw, so whoever reads the log in a
 * terminal or console sees text reordered or split by a stranger's request.
 */

describe('the finding page’s log line', () => {
  it('shows the caller’s unsafe characters in the path escaped, as the acting links log them', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const handler = createFindingHandler({
      secrets: { signingKeys: async () => parseSigningKeys('f'.repeat(40)) } as never,
      reports: () => null,
      silencing: async () => false,
      log: (entry) => logged.push(entry),
    });
    const domain = 'evil\u202eln.elpmaxe\u2028forged.nl';
    const result = await handler({
      httpMethod: 'GET',
      resource: '/finding/{domain}',
      pathParameters: { domain },
      queryStringParameters: null,
      headers: {},
      requestContext: { identity: { sourceIp: '203.0.113.9' } },
    } as unknown as APIGatewayProxyEvent);
    expect(result.statusCode).toBe(400);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.domain).toBe('evil\\u202eln.elpmaxe\\u2028forged.nl');
  });
});
