import { createServer } from 'node:http';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { publishAlert, publishChat } from '../../functions/aws/sns-publish';
import { buildAlertMessage } from '../../functions/core/alerts/message';
import { listenOnLoopback } from '../support/loopback';
import { domainFinding, reportOf } from '../support/report';

/**
 * SNS answering with errors, for what the real SDK client does with them (its own retries run only
 * over HTTP, which aws-sdk-client-mock skips): an endpoint on 127.0.0.1 speaking SNS's query
 * protocol, answering each Publish from a script of errors, then with a message id.
 */
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:alerts';
let script: Array<{ status: number; code: string }> = [];
let publishes = 0;
/** Publishes never answered, and those whose connection the client closed. */
let hang = false;
let closed = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    publishes++;
    if (hang) {
      res.on('close', () => closed++);
      return;
    }
    const error = script.shift();
    res.writeHead(error?.status ?? 200, { 'content-type': 'text/xml' });
    res.end(
      error
        ? `<ErrorResponse><Error><Type>Sender</Type><Code>${error.code}</Code><Message>Rate exceeded</Message></Error><RequestId>r${publishes}</RequestId></ErrorResponse>`
        : `<PublishResponse><PublishResult><MessageId>m-${publishes}</MessageId></PublishResult><ResponseMetadata><RequestId>r${publishes}</RequestId></ResponseMetadata></PublishResponse>`,
    );
  });
});
let endpoint: Awaited<ReturnType<typeof listenOnLoopback>>;
let sns: SNSClient;
beforeAll(async () => {
  endpoint = await listenOnLoopback(server);
  sns = new SNSClient({
    endpoint: endpoint.url,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
});
afterAll(() => endpoint.close());
beforeEach(() => {
  script = [];
  publishes = 0;
  hang = false;
  closed = 0;
});

const alert = buildAlertMessage(reportOf([domainFinding('example.nl', 'expired', 'critical', -2)]));
const kmsThrottled = { status: 400, code: 'KMSThrottling' };

describe('publishing to the KMS-encrypted topics when KMS throttles', () => {
  it('tries the alert and the chat message again, as it does for SNS throttling, and delivers each once', async () => {
    script = [kmsThrottled, kmsThrottled];
    await expect(publishAlert(sns, TOPIC, alert)).resolves.toBe('m-3');
    expect(publishes).toBe(3);
    script = [kmsThrottled];
    await expect(publishChat(sns, { topicArn: TOPIC }, alert)).resolves.toBe('m-5');
    // SNS's own throttling, which the SDK retries itself: the control.
    script = [{ status: 429, code: 'Throttled' }];
    await expect(publishAlert(sns, TOPIC, alert)).resolves.toBe('m-7');
  });

  it('fails the run with a PublishError naming it when KMS keeps throttling', async () => {
    script = Array.from({ length: 20 }, () => kmsThrottled);
    await expect(publishAlert(sns, TOPIC, alert)).rejects.toThrow(
      `could not publish the alert to ${TOPIC}: KMSThrottlingException: Rate exceeded`,
    );
    expect(publishes).toBeGreaterThan(1);
    expect(publishes).toBeLessThan(20);
  });

  // Found by a review: the command line's Ctrl-C gave up waiting for the publish, but the request
  // itself went on (the signal never reached client.send), held open until the process was ended.
  it('a stop ends a publish that SNS never answers: the request is aborted, the connection closed', async () => {
    hang = true;
    for (const publish of [
      (signal: AbortSignal) => publishAlert(sns, TOPIC, alert, signal),
      (signal: AbortSignal) => publishChat(sns, { topicArn: TOPIC }, alert, signal),
    ]) {
      const controller = new AbortController();
      const before = publishes;
      const done = publish(controller.signal);
      await vi.waitFor(() => expect(publishes).toBe(before + 1), { interval: 10 });
      controller.abort(new Error('interrupted by SIGINT'));
      await expect(done).rejects.toThrow('interrupted by SIGINT');
      await vi.waitFor(() => expect(closed).toBe(before + 1), { interval: 10 });
    }
  });
});
