import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { AccountBinding } from './state';

/**
 * Which account a state belongs to, without keeping the key: scrypt of the reseller API key with a
 * random salt of the state's own. Two accounts of one reseller (one base URL, two keys) never share
 * a binding; a state file that leaks does not give the key away, and the salt keeps one key from
 * having the same binding in two states (so states cannot be matched with each other either).
 */

/** scrypt's cost: about 50 ms and 16 MiB, once per scan (a key is far costlier to guess than that). */
const COST = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const HASH_BYTES = 32;

function derive(apiKey: string, salt: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(apiKey, `domain-sentinel account\n${salt}`, HASH_BYTES, COST, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** A new binding of a state to the account of `apiKey`, with a fresh salt. */
export async function bindAccount(apiKey: string): Promise<AccountBinding> {
  const salt = randomBytes(16).toString('base64url');
  return { salt, hash: (await derive(apiKey, salt)).toString('base64url') };
}

/** True when `apiKey` is the key the state was bound with; compared in constant time. */
export async function belongsTo(binding: AccountBinding, apiKey: string): Promise<boolean> {
  const expected = Buffer.from(binding.hash, 'base64url');
  const given = await derive(apiKey, binding.salt);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
