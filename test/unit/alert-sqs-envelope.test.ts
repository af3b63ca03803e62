import { describe, expect, it } from 'vitest';
import { buildAlertMessage, reportJsonOf, snsPublishBytes } from '../../functions/core/alerts/message';
import { WEBHOOK_QUEUE_MESSAGE_BYTES } from '../../lib/chat';
import { domainFinding, reportOf } from '../support/report';

/**
 * Found by a hostile review of AWS limits: the alert fills its publish to SNS's 256 KiB, and SNS
 * delivers it to each webhook's SQS queue in its envelope (raw delivery off): the `default` JSON
 * escaped once more, with the subject, the attributes, a signature and two URLs. An account with
 * some 700 info findings (every domain renewing this month with auto-renew on) made an envelope
 * past SQS's default 256 KiB, the queues' size until then. The queues now take SQS's most.
 */

/** The body SQS receives for `alert` (SNS's envelope, as SNS lays it out, with its longest fields). */
function envelopeBytes(alert: ReturnType<typeof buildAlertMessage>): number {
  const arn = `arn:aws-us-gov:sns:ap-southeast-4:123456789012:DomainSentinel-AlertsTopic${'A'.repeat(20)}`;
  const attributes: Record<string, { Type: string; Value: string }> = {};
  for (const [name, value] of Object.entries(alert.attributes))
    if (value !== undefined)
      attributes[name] = { Type: typeof value === 'number' ? 'Number' : 'String', Value: String(value) };
  const body = {
    Type: 'Notification',
    MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
    TopicArn: arn,
    Subject: alert.subject,
    // SQS subscribers get the `default` variant.
    Message: reportJsonOf(alert),
    Timestamp: '2026-11-22T06:00:00.000Z',
    SignatureVersion: '2',
    Signature: 'S'.repeat(344),
    SigningCertURL: `https://sns.ap-southeast-4.amazonaws.com/SimpleNotificationService-${'f'.repeat(32)}.pem`,
    UnsubscribeURL: `https://sns.ap-southeast-4.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${arn}:22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324`,
    MessageAttributes: attributes,
  };
  return Buffer.byteLength(JSON.stringify(body, null, 2));
}

describe('an alert in its SNS envelope, as a webhook queue receives it', () => {
  it('can pass SQS default 256 KiB, and fits the queues', () => {
    const findings = Array.from({ length: 700 }, (_, i) =>
      domainFinding(`renewing-domain-${i}.nl`, 'expiring', 'info', 20, { auto_renew: true }),
    );
    const alert = buildAlertMessage({
      ...reportOf(findings),
      report_json_url: 'https://sentinel.example/report.json',
    });
    expect(snsPublishBytes(alert)).toBeLessThanOrEqual(262_144);
    const bytes = envelopeBytes(alert);
    expect(bytes).toBeGreaterThan(262_144);
    expect(bytes).toBeLessThanOrEqual(WEBHOOK_QUEUE_MESSAGE_BYTES);
  });
});
