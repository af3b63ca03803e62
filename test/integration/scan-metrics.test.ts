import { afterEach, describe, expect, it } from 'vitest';
import { handleScheduledScan, type ScheduledScanDeps } from '../../functions/handlers/scheduled-scan';
import { quarantinedRecord, startFixedReseller } from '../support/fixed-reseller';
import { quietScanDeps } from '../support/scan-deps';

const KEY = 'sk_live_scan_metrics_5c1e';
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** The metrics a scheduled scan (no memory, no topic) of `domains` emits, by name. */
async function metricsOf(domains: Array<Record<string, unknown>>): Promise<Map<string, number>> {
  const server = await startFixedReseller({ apiKey: KEY, domains });
  close = server.close;
  const emitted = new Map<string, number>();
  const metrics = {
    addMetric: (name: string, _unit: unknown, value: number) => void emitted.set(name, value),
    publishStoredMetrics: () => undefined,
  } as unknown as ScheduledScanDeps['metrics'];
  await handleScheduledScan(quietScanDeps(server.url, KEY, {}, { metrics }), 120_000);
  return emitted;
}

describe('the UnreadableRecords metric', () => {
  const healthy = {
    status: ['registered'],
    date_deleted: null,
    auto_renew: true,
    date_expiry: '2030-01-01T00:00:00Z',
  };

  it('counts the records that could not be read, not those read by their dates only or with their registrant given twice', async () => {
    // Prepare: one record of each kind of problem record.
    const domains = [
      quarantinedRecord('broken.nl', { date_expiry: 'not a date' }),
      quarantinedRecord('odd.nl', { ...healthy, status: ['pending_delete'] }),
      quarantinedRecord('twice.nl', { ...healthy, registrant_handle: 'C1', registant_handle: 'C2' }),
      quarantinedRecord('fine.nl', healthy),
    ];
    // Act
    const emitted = await metricsOf(domains);
    // Assess: three problem records, one of them unreadable (its domain is not among those scanned).
    expect(emitted.get('DomainsScanned')).toBe(3);
    expect(emitted.get('UnreadableRecords')).toBe(1);
  });
});

describe('the CriticalFindings metric', () => {
  it('counts the critical items the alert counts: a record that says quarantine but could not be read among them', async () => {
    // Prepare: a domain in quarantine whose record cannot be read (no finding, a critical problem record).
    const domains = [quarantinedRecord('broken.nl', { date_expiry: 'not a date' })];
    // Act
    const emitted = await metricsOf(domains);
    // Assess: what the alert's subject and critical_count say (alerts/alert.ts criticalCount), not 0.
    expect(emitted.get('UnreadableRecords')).toBe(1);
    expect(emitted.get('CriticalFindings')).toBe(1);
  });
});
