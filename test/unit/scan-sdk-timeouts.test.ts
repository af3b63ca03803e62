import { describe, expect, it } from 'vitest';
import {
  SCAN_SDK_TIMEOUTS,
  type SdkTimeouts,
  uploadTimeoutMs,
  WEB_SDK_TIMEOUTS,
  worstCallMs,
} from '../../functions/aws/sdk-timeouts';
import { PUBLISH_RESERVE_MS, SAVE_MARGIN_MS } from '../../functions/handlers/scheduled-scan';

/*
 * The scan function's timeouts against its own time: a call that hangs fails inside the time kept
 * for it, and an attempt has room for the largest body its client sends at the assumed slowest pace
 * (10 MB/s), with time to spare for the service's answer.
 */

const PACE = 10 * 1_000_000;
/** Time a service is given to answer once the body is sent: many times its usual tens of ms. */
const ANSWER_MS = 500;
/** What the run does after a first save's last write: the heartbeat's ping margin and the metrics. */
const AFTER_SAVE_MS = 1_000;

const sends = (timeouts: SdkTimeouts, bytes: number) =>
  (bytes * 1000) / PACE + ANSWER_MS <= timeouts.requestTimeoutMs;

describe('the scan function timeouts', () => {
  it('give an attempt room for the largest body: an SNS message of 256 KiB, a BatchWriteItem of 16 MB', () => {
    expect(sends(SCAN_SDK_TIMEOUTS.sns, 256 * 1024)).toBe(true);
    expect(sends(SCAN_SDK_TIMEOUTS.dynamodb, 16 * 1_000_000)).toBe(true);
  });

  it('fail a hung publish, alert then chat message, inside the publish reserve', () => {
    expect(2 * worstCallMs(SCAN_SDK_TIMEOUTS.sns)).toBeLessThanOrEqual(PUBLISH_RESERVE_MS);
  });

  it('fail a hung state write in flight when a first save stops, before the function ends', () => {
    expect(worstCallMs(SCAN_SDK_TIMEOUTS.dynamodb) + AFTER_SAVE_MS).toBeLessThanOrEqual(SAVE_MARGIN_MS);
  });

  it('give a report upload its own size at the slowest pace, beyond the time of a small call', () => {
    const s3 = SCAN_SDK_TIMEOUTS.s3;
    // A stress report of a million domains: about 250 MB (docs/performance.md).
    expect(uploadTimeoutMs(s3, 250_000_000)).toBe(s3.requestTimeoutMs + 25_000);
    expect(uploadTimeoutMs(s3, 0)).toBe(s3.requestTimeoutMs);
  });

  it('count the attempts and the SDK waits between them, as the web function budget does', () => {
    expect(worstCallMs(WEB_SDK_TIMEOUTS)).toBe(2_200);
    expect(worstCallMs(SCAN_SDK_TIMEOUTS.sns)).toBe(9_600);
  });
});
