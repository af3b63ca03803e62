import { describe, expect, it } from 'vitest';
import { checkWebhookUrl } from '../../functions/core/alerts/webhook-delivery';

/**
 * A webhook URL is a secret read from SSM (or --webhook): one with a line break, tab or space
 * inside (two URLs stored, one wrapped when pasted) is refused, as a heartbeat URL is, rather than
 * posted to whatever URL parsing makes of it.
 */
describe('checkWebhookUrl', () => {
  it('refuses a URL with a line break, tab or space inside, without showing it', () => {
    for (const url of [
      'https://hooks.slack.com/services/T0\nB1/secret',
      'https://hooks.slack.com/services/T0\tB1/secret',
      'https://hooks.slack.com/services/T0 B1/secret',
    ])
      expect(() => checkWebhookUrl(url, 'SSM parameter /sentinel/webhook')).toThrow(
        'SSM parameter /sentinel/webhook must be one URL, without a space or line break inside (the value is not shown: it is a secret)',
      );
  });

  it('trims white space around the URL and keeps it as it is', () => {
    expect(checkWebhookUrl('  https://hooks.slack.com/services/T0/B1/secret\n', '--webhook')).toBe(
      'https://hooks.slack.com/services/T0/B1/secret',
    );
  });
});
