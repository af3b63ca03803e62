/**
 * FNV-1a, 32 bits, over a string's UTF-16 code units: the one small hash of this project. It never
 * changes between versions or processes, so a store may file items under it (the DynamoDB state's
 * buckets) and paging may fingerprint a record with it. Not for anything an adversary must not
 * collide: a collision costs a bucket shared or a repeat taken for a second record, never a secret.
 */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
