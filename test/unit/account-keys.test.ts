import { describe, expect, it } from 'vitest';
import { sameKeyCheck } from '../../bin/accounts';
import { type AccountSettings, parseAccounts } from '../../lib/config';

/**
 * Found by a review of several accounts: where an account's key is read from, and the check that
 * refuses one account whose key is an earlier account's at the same reseller.
 */

describe('an apiKeyEnv', () => {
  it('is refused when it names a secret of sentinel in other letter case: Windows reads variables without case', () => {
    // On Windows `link_signing_key` is LINK_SIGNING_KEY: its value would be sent to the reseller.
    for (const apiKeyEnv of ['link_signing_key', 'Heartbeat_Url', 'webhook_signing_key']) {
      expect(() => parseAccounts([{ name: 'brand-x', apiKeyEnv }], 'accounts file f.json')).toThrow(
        /account "brand-x" \(accounts\[0\]\): apiKeyEnv must name a variable of the account's key alone/,
      );
    }
  });

  it('is refused when two accounts name one variable in other letter case', () => {
    expect(() =>
      parseAccounts(
        [
          { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY' },
          { name: 'brand-b', apiKeyEnv: 'brand_a_key' },
        ],
        'accounts file f.json',
      ),
    ).toThrow('accounts file f.json: accounts brand-a and brand-b both read their key from brand_a_key');
  });
});

describe('the same-key check of scan --accounts', () => {
  const accounts: AccountSettings[] = [
    { name: 'brand-a', apiKeyEnv: 'BRAND_A_KEY', resellerBaseUrl: 'https://api.reseller.example' },
    { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY', resellerBaseUrl: 'https://API.Reseller.example:443/' },
  ];
  const env = { BRAND_A_KEY: 'sk_live_0123456789abcdef', BRAND_B_KEY: 'sk_live_0123456789abcdef' };

  it('refuses an earlier account key at the same reseller written with other letter case or its default port', () => {
    const check = sameKeyCheck(accounts, env, (a) => a.resellerBaseUrl, 'accounts.json');
    expect(() => check('brand-a')).not.toThrow();
    expect(() => check('brand-b')).toThrow(
      /^BRAND_B_KEY holds the same API key as BRAND_A_KEY of account brand-a, at the same reseller/,
    );
  });

  it('keeps accounts with one key at different resellers', () => {
    const other = [
      accounts[0] as AccountSettings,
      { name: 'brand-b', apiKeyEnv: 'BRAND_B_KEY', resellerBaseUrl: 'https://api.other.example' },
    ];
    const check = sameKeyCheck(other, env, (a) => a.resellerBaseUrl, 'accounts.json');
    expect(() => check('brand-b')).not.toThrow();
  });
});
