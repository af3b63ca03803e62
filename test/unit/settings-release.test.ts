import { APIGatewayClient, GetAccountCommand, UpdateAccountCommand } from '@aws-sdk/client-api-gateway';
import { GetSMSAttributesCommand, SetSMSAttributesCommand, SNSClient } from '@aws-sdk/client-sns';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  handleReleaseEvent,
  LEFT_FOR_ANOTHER_ROLE,
  RELEASE_FAILED,
  RELEASE_PHYSICAL_ID,
  type ReleaseProperties,
} from '../../functions/handlers/settings-release-handler';
import { releaseEvent } from '../support/release-event';

/**
 * The release of the account's own settings when the stack stops owning them (a shared account):
 * each is cleared only while it still names this stack's role; another team's role, or none, is
 * left as it is; and CloudFormation is always told SUCCESS, so a destroy never sticks on it.
 */

const OURS_API = 'arn:aws:iam::123456789012:role/DomainSentinel-AccountSettingsApiGatewayCloud-ABC';
const OURS_SMS = 'arn:aws:iam::123456789012:role/DomainSentinel-AccountSettingsSmsDeliveryStat-DEF';
const THEIRS = 'arn:aws:iam::123456789012:role/other-team-logging';
const BOTH: ReleaseProperties = { ApiGatewayCloudWatchRole: OURS_API, SmsDeliveryStatusRole: OURS_SMS };

const apiGateway = mockClient(APIGatewayClient);
const sns = mockClient(SNSClient);

/** Runs the handler and returns what CloudFormation was told and what was logged. */
async function run(e: CloudFormationCustomResourceEvent) {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  const log = (level: string) => (message: string, fields?: unknown) =>
    lines.push({ level, message, fields: (fields ?? {}) as Record<string, unknown> });
  const responses: Array<{ url: string; body: Record<string, unknown> }> = [];
  await handleReleaseEvent(e, {
    apiGateway: new APIGatewayClient({ region: 'eu-west-1' }),
    sns: new SNSClient({ region: 'eu-west-1' }),
    logger: { info: log('info'), warn: log('warn'), error: log('error') } as never,
    respond: async (url, body) => {
      responses.push({ url, body: JSON.parse(body) });
    },
  });
  return { lines, responses };
}

/** The account's settings as the mocks hold them: what each read answers. */
function account(settings: { api?: string; sms?: string }) {
  apiGateway
    .on(GetAccountCommand)
    .resolves(settings.api === undefined ? {} : { cloudwatchRoleArn: settings.api });
  sns
    .on(GetSMSAttributesCommand)
    .resolves(
      settings.sms === undefined
        ? { attributes: {} }
        : { attributes: { DeliveryStatusIAMRole: settings.sms } },
    );
  apiGateway.on(UpdateAccountCommand).resolves({});
  sns.on(SetSMSAttributesCommand).resolves({});
}

beforeEach(() => {
  apiGateway.reset();
  sns.reset();
});

describe('on delete', () => {
  it('clears both settings while they name our roles, and tells CloudFormation SUCCESS', async () => {
    account({ api: OURS_API, sms: OURS_SMS });
    const { responses } = await run(releaseEvent('Delete', BOTH));
    expect(apiGateway.commandCalls(UpdateAccountCommand).map((c) => c.args[0].input)).toEqual([
      { patchOperations: [{ op: 'replace', path: '/cloudwatchRoleArn', value: '' }] },
    ]);
    expect(sns.commandCalls(SetSMSAttributesCommand).map((c) => c.args[0].input)).toEqual([
      { attributes: { DeliveryStatusIAMRole: '', DeliveryStatusSuccessSamplingRate: '0' } },
    ]);
    expect(sns.commandCalls(GetSMSAttributesCommand)[0]?.args[0].input).toEqual({
      attributes: ['DeliveryStatusIAMRole'],
    });
    expect(responses).toEqual([
      {
        url: 'https://cloudformation-custom-resource-response.example/response?signed',
        body: expect.objectContaining({
          Status: 'SUCCESS',
          PhysicalResourceId: RELEASE_PHYSICAL_ID,
          StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/DomainSentinel/1',
          RequestId: 'request-1',
          LogicalResourceId: 'AccountSettingsRelease198FF876',
        }),
      },
    ]);
  });

  it('leaves settings another team pointed at its own role untouched, and logs why', async () => {
    account({ api: THEIRS, sms: THEIRS });
    const { lines, responses } = await run(releaseEvent('Delete', BOTH));
    expect(apiGateway.commandCalls(UpdateAccountCommand)).toEqual([]);
    expect(sns.commandCalls(SetSMSAttributesCommand)).toEqual([]);
    expect(lines.filter((l) => l.message === LEFT_FOR_ANOTHER_ROLE).map((l) => [l.level, l.fields])).toEqual([
      ['warn', { setting: 'ApiGatewayCloudWatchRole', current: THEIRS, ours: OURS_API }],
      ['warn', { setting: 'SmsDeliveryStatusRole', current: THEIRS, ours: OURS_SMS }],
    ]);
    expect(responses[0]?.body.Status).toBe('SUCCESS');
  });

  it('changes nothing when a setting names no role (already cleared, or never set)', async () => {
    account({ api: '', sms: undefined });
    const { responses } = await run(releaseEvent('Delete', BOTH));
    expect(apiGateway.commandCalls(UpdateAccountCommand)).toEqual([]);
    expect(sns.commandCalls(SetSMSAttributesCommand)).toEqual([]);
    expect(responses[0]?.body.Status).toBe('SUCCESS');
  });

  it('clears the one that is still ours and leaves the one another team took', async () => {
    account({ api: THEIRS, sms: OURS_SMS });
    await run(releaseEvent('Delete', BOTH));
    expect(apiGateway.commandCalls(UpdateAccountCommand)).toEqual([]);
    expect(sns.commandCalls(SetSMSAttributesCommand)).toHaveLength(1);
  });

  it('does not touch SNS when the stack owned no SMS setting', async () => {
    account({ api: OURS_API, sms: OURS_SMS });
    await run(releaseEvent('Delete', { ApiGatewayCloudWatchRole: OURS_API }));
    expect(apiGateway.commandCalls(UpdateAccountCommand)).toHaveLength(1);
    expect(sns.calls()).toEqual([]);
  });

  it('still answers SUCCESS when a setting cannot be read or cleared: it is logged and left, and the deletion goes on', async () => {
    apiGateway
      .on(GetAccountCommand)
      .rejects(Object.assign(new Error('User is not authorized'), { name: 'AccessDeniedException' }));
    sns.on(GetSMSAttributesCommand).resolves({ attributes: { DeliveryStatusIAMRole: OURS_SMS } });
    sns
      .on(SetSMSAttributesCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottledException' }));
    const { lines, responses } = await run(releaseEvent('Delete', BOTH));
    expect(apiGateway.commandCalls(UpdateAccountCommand)).toEqual([]);
    expect(lines.filter((l) => l.level === 'error').map((l) => [l.message, l.fields])).toEqual([
      [
        RELEASE_FAILED,
        {
          setting: 'ApiGatewayCloudWatchRole',
          ours: OURS_API,
          error: 'AccessDeniedException: User is not authorized',
        },
      ],
      [
        RELEASE_FAILED,
        { setting: 'SmsDeliveryStatusRole', ours: OURS_SMS, error: 'ThrottledException: Rate exceeded' },
      ],
    ]);
    expect(responses.map((r) => r.body.Status)).toEqual(['SUCCESS']);
  });

  it('throws when CloudFormation cannot be told, so Lambda invokes it again', async () => {
    account({ api: OURS_API, sms: OURS_SMS });
    await expect(
      handleReleaseEvent(releaseEvent('Delete', BOTH), {
        apiGateway: new APIGatewayClient({ region: 'eu-west-1' }),
        sns: new SNSClient({ region: 'eu-west-1' }),
        logger: { info: () => {}, warn: () => {}, error: () => {} } as never,
        respond: async () => {
          throw new Error('CloudFormation refused the response: HTTP 403');
        },
      }),
    ).rejects.toThrow('HTTP 403');
  });
});

describe('on create and update', () => {
  it('touches no setting on create: AWS::ApiGateway::Account and the SmsAttributes call set them', async () => {
    account({ api: OURS_API, sms: OURS_SMS });
    const { responses } = await run(releaseEvent('Create', BOTH));
    expect([...apiGateway.calls(), ...sns.calls()]).toEqual([]);
    expect(responses[0]?.body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: RELEASE_PHYSICAL_ID });
  });

  it('touches no setting on an update that keeps both roles', async () => {
    account({ api: OURS_API, sms: OURS_SMS });
    await run(releaseEvent('Update', BOTH, BOTH));
    expect([...apiGateway.calls(), ...sns.calls()]).toEqual([]);
  });

  it('touches no setting on an update that drops one: its own resource is deleted once the update succeeded', async () => {
    // An update that then fails rolls back, and nothing would set the SMS role again: so an update
    // never releases; the SMS setting has a release resource of its own, whose delete comes in the
    // cleanup after a successful update (SMS turned off), or never (rolled back).
    account({ api: OURS_API, sms: OURS_SMS });
    const { responses } = await run(releaseEvent('Update', { ApiGatewayCloudWatchRole: OURS_API }, BOTH));
    expect([...apiGateway.calls(), ...sns.calls()]).toEqual([]);
    expect(responses[0]?.body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: RELEASE_PHYSICAL_ID });
  });

  it('leaves a setting already pointed at our replacement role on an update that replaces the role', async () => {
    const NEW = `${OURS_API}-replacement`;
    account({ api: NEW, sms: OURS_SMS });
    await run(releaseEvent('Update', { ...BOTH, ApiGatewayCloudWatchRole: NEW }, BOTH));
    expect([...apiGateway.calls(), ...sns.calls()]).toEqual([]);
  });
});
