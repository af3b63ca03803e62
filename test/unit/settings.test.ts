import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../functions/core/base/errors';
import { loadScanSettings, SETTINGS } from '../../functions/core/scan/config';
import { loadDeploySettings } from '../../lib/config';

const BASE = 'https://api.reseller.example';
const stackConfig = (context: Record<string, unknown>) =>
  loadDeploySettings(new App({ context: { resellerBaseUrl: BASE, ...context } }).node);

describe('one schema and one default per setting', () => {
  it('gives the command line, the Lambdas and the CDK app the same defaults', () => {
    const cli = loadScanSettings({ resellerBaseUrl: BASE });
    const cdk = stackConfig({});
    for (const key of ['expiryDays', 'criticalDays', 'minSeverity', 'timeZone'] as const) {
      expect(cdk[key], key).toEqual(cli[key]);
      expect(String(cli[key]), key).toBe(String(SETTINGS[key].default));
    }
  });

  it.each([
    ['expiryDays', '45', 45],
    ['criticalDays', '3', 3],
    ['minSeverity', 'critical', 'critical'],
    ['timeZone', 'Europe/Amsterdam', 'Europe/Amsterdam'],
  ] as const)('reads %s=%s the same way everywhere', (key, value, expected) => {
    expect(loadScanSettings({ resellerBaseUrl: BASE, [key]: value })[key]).toEqual(expected);
    expect(stackConfig({ [key]: value })[key]).toEqual(expected);
  });

  it.each([
    ['expiryDays', 'soon', 'EXPIRY_DAYS (--expiry-days) must be a whole number from 1 to 3650'],
    ['timeZone', 'Mars/Olympus', 'ALERT_TIME_ZONE (--time-zone) must be an IANA time zone'],
    [
      'timeZone',
      'Europe/Amsterdm',
      'ALERT_TIME_ZONE (--time-zone) must be an IANA time zone such as UTC or Europe/Amsterdam; did you mean Europe/Amsterdam?',
    ],
    ['timeZone', 'America/Sao_Paolo', 'did you mean America/Sao_Paulo?'],
    [
      'accountLabel',
      'Reseller\nInjected line',
      'ACCOUNT_LABEL must not hold control or invisible characters',
    ],
    ['accountLabel', 'x'.repeat(41), 'ACCOUNT_LABEL must be at most 40 characters'],
  ] as const)('refuses %s=%j everywhere, naming it', (key, value, message) => {
    expect(() => loadScanSettings({ resellerBaseUrl: BASE, [key]: value })).toThrow(message);
    expect(() => stackConfig({ [key]: value })).toThrow(new RegExp(`^invalid context: ${key} `));
  });

  it('says what is wrong with a value once, though a number too large for a whole number fails two checks', () => {
    const refusal = () => loadScanSettings({ resellerBaseUrl: BASE, expiryDays: '99999999999999999999' });
    expect(refusal).toThrow(ConfigError);
    expect(refusal).toThrow(/^EXPIRY_DAYS \(--expiry-days\) must be a whole number from 1 to 3650$/);
  });

  it('suggests a time zone only when one is close: Mars/Olympus gets none', () => {
    expect(() => loadScanSettings({ resellerBaseUrl: BASE, timeZone: 'Mars/Olympus' })).toThrow(
      /must be an IANA time zone such as UTC or Europe\/Amsterdam$/,
    );
    expect(loadScanSettings({ resellerBaseUrl: BASE, timeZone: 'UTC' }).timeZone).toBe('UTC');
  });

  it.each([
    'https://sentinel.example/base?x=1',
    'https://sentinel.example/base?',
    'https://sentinel.example/base#top',
    'https://sentinel.example/#',
  ])('refuses a base URL with a query or a fragment (%s), which would break every link and path', (url) => {
    const rule = 'must not carry a query (?…) or a fragment (#…): paths are appended to it; remove them';
    expect(() => loadScanSettings({ resellerBaseUrl: BASE, linkBaseUrl: url })).toThrow(
      new ConfigError(`LINK_BASE_URL ${rule}`),
    );
    expect(() => loadScanSettings({ resellerBaseUrl: url })).toThrow(
      `RESELLER_BASE_URL (--base-url) ${rule}`,
    );
    expect(() => stackConfig({ resellerBaseUrl: url })).toThrow(rule);
  });

  it('keeps a base URL with a path, dropping trailing slashes', () => {
    expect(
      loadScanSettings({ resellerBaseUrl: BASE, linkBaseUrl: 'https://s.example/base/' }).linkBaseUrl,
    ).toBe('https://s.example/base');
    expect(() => loadScanSettings({ resellerBaseUrl: 'ftp://x.example' })).toThrow(
      'RESELLER_BASE_URL (--base-url) must be an http(s) URL without credentials',
    );
  });

  it('names every bad setting at once and says what a required one is', () => {
    const error = (() => {
      try {
        loadScanSettings({ perPage: '0', concurrency: 'many' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toBe(
      'RESELLER_BASE_URL (--base-url) is required; PER_PAGE (--per-page) must be a whole number from 1 to 1000; ' +
        'SCAN_CONCURRENCY (--concurrency) must be a whole number from 1 to 32',
    );
  });
});
