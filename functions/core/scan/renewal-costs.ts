import { type DomainFinding, type Finding, isDomainFinding } from '../findings/classify';

/**
 * What the renewals due in the expiry window of premium and custom-priced domains will cost: the
 * report's `renewal_costs` (docs/deadlines.md).
 */

/** The renewals due in the expiry window of premium and custom-priced domains, and what they cost. */
export interface RenewalCosts {
  readonly window_days: number;
  /** Per currency: how many renewals carry a price in it, and their sum. */
  readonly totals: ReadonlyArray<{
    readonly currency: string;
    readonly count: number;
    readonly amount: number;
  }>;
  /**
   * The priced renewals in currencies beyond the {@link RENEWAL_CURRENCIES_KEPT} of `totals` (the
   * fewest renewals): each finding still carries its price. Absent when every currency is there.
   */
  readonly other_currencies?: { readonly currencies: number; readonly count: number };
  readonly premium: number;
  readonly custom: number;
  /** Premium or custom-priced renewals whose record states no price. */
  readonly unpriced: number;
}

/**
 * Currencies `totals` holds at most, those with the most renewals. A real account has a handful;
 * a reseller API that sends a different one of the 17 576 three-letter codes on each domain made
 * the report's small fields (carried whole in the alert's JSON, escaped twice) and the digest's
 * totals line over SNS's 256 KB, and the whole alert was refused.
 */
export const RENEWAL_CURRENCIES_KEPT = 10;

/** Findings whose renewal falls due in the window: expiring, or a renewal that failed and expires in it. */
function isRenewalDue(f: DomainFinding, now: number, windowDays: number): boolean {
  if (f.kind !== 'expiring' && f.kind !== 'renewal_failed') return false;
  const expiry = Date.parse(f.date_expiry);
  return expiry > now && expiry <= now + windowDays * 86_400_000;
}

/**
 * The cost of the priced renewals due in the window, per currency. Sums in cents, so 0.1 + 0.2 stays
 * 0.3; null when no renewal due in the window is premium or custom-priced.
 */
export function renewalCosts(
  findings: readonly Finding[],
  now: number,
  windowDays: number,
): RenewalCosts | null {
  const cents = new Map<string, { count: number; cents: number }>();
  let premium = 0;
  let custom = 0;
  let unpriced = 0;
  for (const f of findings) {
    if (!isDomainFinding(f) || !f.price || !isRenewalDue(f, now, windowDays)) continue;
    if (f.price.kind === 'premium') premium++;
    else custom++;
    const { currency, amount } = f.price;
    if (currency === undefined || amount === undefined) {
      unpriced++;
      continue;
    }
    const sum = cents.get(currency) ?? { count: 0, cents: 0 };
    sum.count++;
    sum.cents += Math.round(amount * 100);
    cents.set(currency, sum);
  }
  if (premium + custom === 0) return null;
  const byCode = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : 1);
  const all = [...cents];
  const kept = all
    .sort((a, b) => b[1].count - a[1].count || byCode(a, b))
    .slice(0, RENEWAL_CURRENCIES_KEPT)
    .sort(byCode);
  const totals = kept.map(([currency, sum]) => ({ currency, count: sum.count, amount: sum.cents / 100 }));
  const left = all.length - kept.length;
  const leftCount = all.reduce((n, [, sum]) => n + sum.count, 0) - totals.reduce((n, t) => n + t.count, 0);
  return {
    window_days: windowDays,
    totals,
    ...(left > 0 ? { other_currencies: { currencies: left, count: leftCount } } : {}),
    premium,
    custom,
    unpriced,
  };
}
