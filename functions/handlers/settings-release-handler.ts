import https from 'node:https';
import type { Logger } from '@aws-lambda-powertools/logger';
import { type APIGatewayClient, GetAccountCommand, UpdateAccountCommand } from '@aws-sdk/client-api-gateway';
import { GetSMSAttributesCommand, SetSMSAttributesCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { errorLine } from '../core/base/errors';

/*
 * The custom resource that gives the account's own settings back when the stack stops owning them
 * (lib/account-settings.ts): API Gateway's CloudWatch Logs role and SNS's SMS delivery-status role
 * are account-wide, so another team may have pointed either at a role of its own since our deploy.
 * Each is cleared only while it still names the role this stack made; one naming another role, or
 * none, is left as it is. Setting them is not done here (AWS::ApiGateway::Account and the
 * SmsAttributes call set them on create and update, as the owner of the settings).
 */

/** The resource's properties: the role ARN each setting names while this stack owns it. */
export interface ReleaseProperties {
  readonly ApiGatewayCloudWatchRole?: string;
  readonly SmsDeliveryStatusRole?: string;
}

export type SettingName = keyof ReleaseProperties;

/** What became of one setting: cleared (it named our role), left (another role, none, or unread). */
export type ReleaseOutcome = 'cleared' | 'names-another-role' | 'absent' | 'failed';

export interface ReleaseDeps {
  readonly apiGateway: Pick<APIGatewayClient, 'send'>;
  readonly sns: Pick<SNSClient, 'send'>;
  readonly logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Sends CloudFormation the result (the event's pre-signed ResponseURL). @default a PUT with https.request */
  readonly respond?: (url: string, body: string) => Promise<void>;
}

/** The one physical id: an update never replaces the resource (which would release on the way). */
export const RELEASE_PHYSICAL_ID = 'domain-sentinel-account-settings-release';

/** The log line of a setting left because another role is in it (docs/troubleshooting.md). */
export const LEFT_FOR_ANOTHER_ROLE =
  'left the account setting as it is: it names another role than this stack made, so another deployment owns it now';

/** The log line of a setting that could not be read or cleared (docs/troubleshooting.md). */
export const RELEASE_FAILED =
  'could not release the account setting; left as it is so the stack deletion goes on: check it by hand';

/** How to read and clear each setting: the current role ARN ('' for none), and the clear. */
interface SettingAccess {
  readonly read: (deps: ReleaseDeps) => Promise<string>;
  readonly clear: (deps: ReleaseDeps) => Promise<void>;
}

const ACCESS: Record<SettingName, SettingAccess> = {
  ApiGatewayCloudWatchRole: {
    read: async ({ apiGateway }) =>
      (await apiGateway.send(new GetAccountCommand({}))).cloudwatchRoleArn ?? '',
    clear: async ({ apiGateway }) => {
      await apiGateway.send(
        new UpdateAccountCommand({
          patchOperations: [{ op: 'replace', path: '/cloudwatchRoleArn', value: '' }],
        }),
      );
    },
  },
  SmsDeliveryStatusRole: {
    read: async ({ sns }) =>
      (await sns.send(new GetSMSAttributesCommand({ attributes: ['DeliveryStatusIAMRole'] }))).attributes
        ?.DeliveryStatusIAMRole ?? '',
    clear: async ({ sns }) => {
      await sns.send(
        new SetSMSAttributesCommand({
          attributes: { DeliveryStatusIAMRole: '', DeliveryStatusSuccessSamplingRate: '0' },
        }),
      );
    },
  },
};

/**
 * Clears one setting if it still names `ours`. Never throws: a setting that cannot be read or
 * cleared is logged and left, because an error here would fail the stack's deletion (DELETE_FAILED)
 * for a setting that, unread, may as well be another team's.
 */
export async function releaseSetting(
  setting: SettingName,
  ours: string,
  deps: ReleaseDeps,
): Promise<ReleaseOutcome> {
  const access = ACCESS[setting];
  try {
    const current = await access.read(deps);
    if (current === '') {
      deps.logger.info('the account setting names no role: nothing to release', { setting });
      return 'absent';
    }
    if (current !== ours) {
      deps.logger.warn(LEFT_FOR_ANOTHER_ROLE, { setting, current, ours });
      return 'names-another-role';
    }
    await access.clear(deps);
    deps.logger.info('cleared the account setting: it named the role of this stack', { setting, ours });
    return 'cleared';
  } catch (error) {
    deps.logger.error(RELEASE_FAILED, { setting, ours, error: errorLine(error).slice(0, 500) });
    return 'failed';
  }
}

/**
 * The settings to release for one event: on delete every one the resource names; on create and
 * update none. Each setting has a resource of its own (lib/account-settings.ts), so a setting the
 * template drops (SMS turned off, or ownAccountSettings) is released by that resource's delete, in
 * the cleanup after the update succeeded: an update that fails and rolls back releases nothing,
 * since nothing would set the setting again.
 */
export function settingsToRelease(event: CloudFormationCustomResourceEvent): Array<[SettingName, string]> {
  if (event.RequestType !== 'Delete') return [];
  const named = event.ResourceProperties as ReleaseProperties;
  const names: SettingName[] = ['ApiGatewayCloudWatchRole', 'SmsDeliveryStatusRole'];
  return names.flatMap((name): Array<[SettingName, string]> => {
    const role = named[name];
    return typeof role === 'string' && role !== '' ? [[name, role]] : [];
  });
}

/**
 * The custom resource's handler. It answers SUCCESS to every request it understood: releasing never
 * fails the request (see releaseSetting). Only when CloudFormation cannot be told does it throw, so
 * Lambda invokes it again (releasing twice is harmless: the second read finds the setting cleared).
 */
export async function handleReleaseEvent(
  event: CloudFormationCustomResourceEvent,
  deps: ReleaseDeps,
): Promise<void> {
  const outcomes: Partial<Record<SettingName, ReleaseOutcome>> = {};
  for (const [setting, role] of settingsToRelease(event))
    outcomes[setting] = await releaseSetting(setting, role, deps);
  deps.logger.info('account settings release', { requestType: event.RequestType, outcomes });
  const body = JSON.stringify({
    Status: 'SUCCESS',
    Reason: `released: ${JSON.stringify(outcomes)}`,
    PhysicalResourceId: RELEASE_PHYSICAL_ID,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
  });
  await (deps.respond ?? putResponse)(event.ResponseURL, body);
}

/**
 * PUTs the response to CloudFormation's pre-signed S3 URL, as cfn-response does (https.request, no
 * content type: the URL is signed without one).
 */
function putResponse(url: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const { hostname, pathname, search } = new URL(url);
    const request = https.request(
      {
        hostname,
        path: `${pathname}${search}`,
        method: 'PUT',
        headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (response) => {
        response.on('data', () => {}); // drained: 'end' comes only once the body is read
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`CloudFormation refused the response: HTTP ${status}`));
        });
      },
    );
    request.on('timeout', () =>
      request.destroy(new Error('CloudFormation did not take the response in 10 s')),
    );
    request.on('error', reject);
    request.write(body);
    request.end();
  });
}
