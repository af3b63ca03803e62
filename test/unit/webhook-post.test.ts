import { describe, expect, it } from 'vitest';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { postWebhook, webhookSender } from '../../functions/use-cases/webhook-post';
import { domainFinding, reportOf } from '../support/report';

/**
 * A webhook URL is its secret (docs/chat.md: the log names the parameter and the host). A refusal
 * is logged with the webhook's own words, and a plain web server's words quote the path it was
 * asked for (Express: `Cannot POST /services/T0/B0/secret`), so they must lose the URL's secret parts.
 */
describe('postWebhook', () => {
  const url =
    'https://hooks.example.com/services/T0AAAA/B0BBBB/s3cretTok3nXYZ?sig=qwertyuiop123&api-version=1';
  const answering = (text: string, status = 404) =>
    (async () => new Response(text, { status })) as unknown as typeof fetch;

  it('keeps the path and query of the URL out of the reason when the webhook answer quotes them', async () => {
    for (const answer of [
      'Cannot POST /services/T0AAAA/B0BBBB/s3cretTok3nXYZ',
      `no such hook: ${url}`,
      'bad sig qwertyuiop123',
      'unknown token s3cretTok3nXYZ',
      'Cannot POST /services/T0AAAA/B0BBBB/s3cretTok3nXYZ?sig=qwertyuiop123&amp;api-version=1',
    ]) {
      const outcome = await postWebhook(url, '{}', {}, { fetch: answering(answer) });
      expect(outcome.kind).toBe('rejected');
      expect(outcome.reason).not.toContain('s3cretTok3nXYZ');
      expect(outcome.reason).not.toContain('qwertyuiop123');
      expect(outcome.reason).not.toContain('T0AAAA/B0BBBB');
    }
  });

  it('keeps the words of an answer that quotes nothing of the URL', async () => {
    const outcome = await postWebhook(url, '{}', {}, { fetch: answering('invalid_token', 403) });
    expect(outcome.reason).toBe('invalid_token');
  });

  it('says no part of the URL in the error of scan --webhook when the webhook quotes it', async () => {
    const alert = buildAlertMessage(reportOf([domainFinding('a.nl', 'expiring', 'critical', 2)]));
    const send = webhookSender(
      { url, format: 'slack' },
      { fetch: answering('Cannot POST /services/T0AAAA/B0BBBB/s3cretTok3nXYZ') },
    );
    const error = await send(alert).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toContain('the slack webhook at hooks.example.com answered HTTP 404');
    expect(error?.message).not.toContain('s3cretTok3nXYZ');
  });
});
