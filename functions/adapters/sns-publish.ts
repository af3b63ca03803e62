import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { AlertMessage } from '../core/alert';
import { PublishError } from '../core/errors';

/** Delivers the scan's one alert message and returns its message id: SNS in AWS, stdout or a file locally. */
export type AlertSender = (alert: AlertMessage) => Promise<string>;

/** The sender of a deployed scan: the alert topic. */
export const snsSender =
  (sns: SNSClient, topicArn: string): AlertSender =>
  (alert) =>
    publishAlert(sns, topicArn, alert);

/**
 * Publishes the scan's one alert message. The SDK retries throttling and transient faults itself;
 * what still fails becomes a PublishError so the run fails and the alarm fires.
 */
export async function publishAlert(sns: SNSClient, topicArn: string, alert: AlertMessage): Promise<string> {
  try {
    const out = await sns.send(
      new PublishCommand({
        TopicArn: topicArn,
        Subject: alert.subject,
        Message: alert.message,
        MessageStructure: 'json',
        MessageAttributes: {
          severity: { DataType: 'String', StringValue: alert.attributes.severity },
          critical_count: { DataType: 'Number', StringValue: String(alert.attributes.critical_count) },
          warning_count: { DataType: 'Number', StringValue: String(alert.attributes.warning_count) },
          ...(alert.attributes.account
            ? { account: { DataType: 'String', StringValue: alert.attributes.account } }
            : {}),
        },
      }),
    );
    return out.MessageId ?? '(no message id)';
  } catch (error) {
    const name = (error as Error).name ?? 'Error';
    const message = (error as Error).message ?? String(error);
    throw new PublishError(`could not publish the alert to ${topicArn}: ${name}: ${message}`, {
      cause: error,
    });
  }
}
