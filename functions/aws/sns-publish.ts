import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { type ChatOptions, chatNotificationOf } from '../core/alerts/chat';
import type { AlertMessage } from '../core/alerts/message';
import { PublishError } from '../core/base/errors';
import { retry } from '../core/base/retry';
import type { ScanSettings } from '../core/scan/config';
import type { AlertSender } from '../use-cases/publish-alert';

/** Where the chat message goes besides the alert, and what it is told. */
export interface ChatTarget extends ChatOptions {
  /** The chat topic (CHAT_TOPIC_ARN) the Slack and Teams channel configurations subscribe to. */
  readonly topicArn: string;
}

/** The chat target the settings name (CHAT_TOPIC_ARN), if any. */
export const chatTargetOf = (settings: ScanSettings): ChatTarget | undefined =>
  settings.chatTopicArn
    ? {
        topicArn: settings.chatTopicArn,
        timeZone: settings.timeZone,
        ...(settings.accountLabel ? { accountLabel: settings.accountLabel } : {}),
      }
    : undefined;

/**
 * The sender of a deployed scan: the alert topic, then (when the stack has a chat topic) the same
 * alert as a custom notification on the chat topic. Alert first: it is the one every subscriber
 * reads; a chat publish that fails still fails the run, so the next run says it again. `signal`
 * (the command line's stop) aborts a publish in flight and its retries.
 */
export const snsSender =
  (sns: SNSClient, topicArn: string, chat?: ChatTarget, signal?: AbortSignal): AlertSender =>
  async (alert) => {
    const messageId = await publishAlert(sns, topicArn, alert, signal);
    // The chat channels are the deployment's: they get the account's message, not a group's again.
    if (chat && !alert.attributes.group) await publishChat(sns, chat, alert, signal);
    return messageId;
  };

/** Tries after the first when KMS throttles a publish (waits of up to 0.2, 0.4 and 0.8 s, jittered). */
const KMS_THROTTLING_RETRIES = 3;

/**
 * Sends a Publish, trying it again when KMS throttles: both topics are encrypted with a KMS key, and
 * the SDK retries SNS's own throttling (ThrottledException) but not KMSThrottlingException (a 400),
 * so without this one busy moment of the account's KMS quota failed the run at the first try.
 */
function sendPublish(sns: SNSClient, command: PublishCommand, signal: AbortSignal | undefined) {
  return retry(() => sns.send(command, signal ? { abortSignal: signal } : undefined), {
    ...(signal ? { signal } : {}),
    retries: KMS_THROTTLING_RETRIES,
    minTimeout: 200,
    randomize: true,
    shouldRetry: ({ error }) => (error as Error).name === 'KMSThrottlingException',
  });
}

/**
 * Publishes the custom notification (a plain JSON message: Amazon Q Developer in chat applications
 * drops any other format without a word, counting it in its UnsupportedEvents metric).
 */
export async function publishChat(
  sns: SNSClient,
  chat: ChatTarget,
  alert: AlertMessage,
  signal?: AbortSignal,
): Promise<string> {
  try {
    const out = await sendPublish(
      sns,
      new PublishCommand({
        TopicArn: chat.topicArn,
        Message: JSON.stringify(chatNotificationOf(alert, chat)),
        MessageAttributes: {
          severity: { DataType: 'String', StringValue: alert.attributes.severity },
          // As on the alert topic: a webhook or channel of one account filters on it.
          ...(alert.attributes.account
            ? { account: { DataType: 'String', StringValue: alert.attributes.account } }
            : {}),
        },
      }),
      signal,
    );
    return out.MessageId ?? '(no message id)';
  } catch (error) {
    // Stopped, not failed: the stop's own reason.
    signal?.throwIfAborted();
    throw new PublishError(
      `could not publish the chat message to ${chat.topicArn}: ${(error as Error).name ?? 'Error'}: ${(error as Error).message ?? String(error)}`,
      { cause: error },
    );
  }
}

/**
 * Publishes the scan's one alert message. The SDK retries throttling and transient faults itself,
 * and sendPublish KMS's throttling; what still fails becomes a PublishError so the run fails and the alarm fires.
 */
export async function publishAlert(
  sns: SNSClient,
  topicArn: string,
  alert: AlertMessage,
  signal?: AbortSignal,
): Promise<string> {
  try {
    const out = await sendPublish(
      sns,
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
          ...(alert.attributes.group
            ? { group: { DataType: 'String', StringValue: alert.attributes.group } }
            : {}),
          ...(alert.attributes.sms ? { sms: { DataType: 'String', StringValue: alert.attributes.sms } } : {}),
          ...(alert.attributes.escalation
            ? { escalation: { DataType: 'String', StringValue: alert.attributes.escalation } }
            : {}),
        },
      }),
      signal,
    );
    return out.MessageId ?? '(no message id)';
  } catch (error) {
    signal?.throwIfAborted();
    const name = (error as Error).name ?? 'Error';
    const message = (error as Error).message ?? String(error);
    throw new PublishError(`could not publish the alert to ${topicArn}: ${name}: ${message}`, {
      cause: error,
    });
  }
}
