/**
 * How long one call of an AWS SDK client may take before it gives up. The SDK waits for good by
 * default (no timeout at all): a DynamoDB write that hangs holds the web function until Lambda
 * kills it, and the person who clicked a link gets API Gateway's bare 502 instead of a page.
 */
export interface SdkTimeouts {
  /** One attempt's TCP (and TLS) connection. */
  readonly connectionTimeoutMs: number;
  /**
   * One attempt, from sending the request to the answer's headers (connection included). The body
   * is then read at the reader's pace, unbounded: a large report view is streamed for seconds, and
   * an idle-socket timeout (`socketTimeout`) would cut it whenever the parser holds the stream back.
   */
  readonly requestTimeoutMs: number;
  /** Attempts of one call, the first included: a timed-out attempt is retried as a transient error. */
  readonly maxAttempts: number;
  /**
   * The slowest an upload may go (bytes a second): a call that sends a body of a size known only
   * when it is made (a report to S3) has `requestTimeoutMs` plus this pace's time for its bytes
   * (uploadTimeoutMs), since requestTimeout also counts the sending of the body.
   */
  readonly uploadBytesPerSecond?: number;
}

/**
 * The web function's clients (DynamoDB, S3, SSM). DynamoDB, SSM and S3 answer a call of this
 * function in tens of milliseconds, so a second per attempt is many times the usual; two attempts
 * and the SDK's backoff between them (at most 100 ms × 2) make at most 2.2 s per call. The budget
 * against the function's 25 s timeout is in docs/links.md ("When AWS does not answer").
 */
export const WEB_SDK_TIMEOUTS: SdkTimeouts = {
  connectionTimeoutMs: 500,
  requestTimeoutMs: 1_000,
  maxAttempts: 2,
};

/** Bytes a second that Lambda's network is assumed to carry at the least, to S3, SNS and DynamoDB in the region. */
const SLOWEST_UPLOAD_BYTES_PER_SECOND = 10 * 1_000_000;

/**
 * The scan function's clients, each sized by the largest body it sends, at 10 MB/s (80 Mbit/s):
 * a conservative figure, a tenth or less of what a Lambda function in the region is commonly
 * measured to send to S3 and DynamoDB. A call that hangs fails inside the 20 s the scan keeps back
 * for publishing (PUBLISH_RESERVE_MS); docs/performance.md ("When AWS does not answer") has the
 * arithmetic.
 *
 * - SNS: a message is at most 256 KiB (26 ms at that pace) and SNS answers a Publish to a KMS
 *   topic in tens of milliseconds: 3 s an attempt, 3 attempts, at most 9.6 s a publish.
 * - DynamoDB: a BatchWriteItem is at most 16 MB (1.6 s at that pace): 2.5 s an attempt, 3 attempts
 *   (the SDK's own, for throttling), at most 8.1 s a call: less than the 10 s a first save keeps
 *   before the timeout (SAVE_MARGIN_MS), which a write in flight at that moment must finish in.
 * - S3: the accounts file, an account's summary: 3 s an attempt, 3 attempts; a report's PutObject
 *   (hundreds of MB for a million domains) has 3 s plus its own size at that pace, an attempt.
 * - SSM (the keys, read before the scan: from its time, not the reserve) and EventBridge Scheduler
 *   (a held SMS's schedule, a small body): 3 s an attempt, 3 attempts.
 */
export const SCAN_SDK_TIMEOUTS = {
  sns: { connectionTimeoutMs: 1_000, requestTimeoutMs: 3_000, maxAttempts: 3 },
  dynamodb: { connectionTimeoutMs: 1_000, requestTimeoutMs: 2_500, maxAttempts: 3 },
  s3: {
    connectionTimeoutMs: 1_000,
    requestTimeoutMs: 3_000,
    maxAttempts: 3,
    uploadBytesPerSecond: SLOWEST_UPLOAD_BYTES_PER_SECOND,
  },
  ssm: { connectionTimeoutMs: 1_000, requestTimeoutMs: 3_000, maxAttempts: 3 },
  scheduler: { connectionTimeoutMs: 1_000, requestTimeoutMs: 3_000, maxAttempts: 3 },
} as const satisfies Record<string, SdkTimeouts>;

/** Timeouts for each of the scan function's clients (a test gives small ones). */
export type ScanSdkTimeouts = { readonly [client in keyof typeof SCAN_SDK_TIMEOUTS]: SdkTimeouts };

/**
 * How long one attempt of a call sending `bytes` may take: the call's own time and the body's at
 * the slowest pace `timeouts` allow (none given: the call's time alone).
 */
export function uploadTimeoutMs(timeouts: SdkTimeouts, bytes: number): number {
  const pace = timeouts.uploadBytesPerSecond;
  return timeouts.requestTimeoutMs + (pace ? Math.ceil((bytes * 1000) / pace) : 0);
}

/**
 * The longest a call that never answers takes to fail: each attempt's time, and the SDK's waits
 * between them (at most 100 ms × 2^i before try i + 1, an upper bound of its standard strategy's
 * for an error that is not throttling). `bytes`: the body a call sends (uploadTimeoutMs).
 */
export function worstCallMs(timeouts: SdkTimeouts, bytes = 0): number {
  let waits = 0;
  for (let retry = 1; retry < timeouts.maxAttempts; retry++) waits += 100 * 2 ** retry;
  return timeouts.maxAttempts * uploadTimeoutMs(timeouts, bytes) + waits;
}

/** The client configuration that bounds each call by `timeouts`, through the SDK's own HTTP handler settings. */
export function timedClientConfig(timeouts: SdkTimeouts) {
  return {
    maxAttempts: timeouts.maxAttempts,
    requestHandler: {
      connectionTimeout: timeouts.connectionTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      // Without it, a breach of requestTimeout is only a logged warning (@smithy/node-http-handler 4):
      // the call goes on waiting.
      throwOnRequestTimeout: true,
    },
  };
}
