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
  readonly premium: number;
  readonly custom: number;
  /** Premium or custom-priced renewals whose record states no price. */
  readonly unpriced: number;
}

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
  const totals = [...cents]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, sum]) => ({ currency, count: sum.count, amount: sum.cents / 100 }));
  return { window_days: windowDays, totals, premium, custom, unpriced };
}
