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
