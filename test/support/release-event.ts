import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import {
  RELEASE_PHYSICAL_ID,
  type ReleaseProperties,
} from '../../functions/handlers/settings-release-handler';

/** The event CloudFormation sends the settings release's custom resource, for `properties` (and the old ones on an update). */
export function releaseEvent(
  type: 'Create' | 'Update' | 'Delete',
  properties: ReleaseProperties,
  old: ReleaseProperties = properties,
): CloudFormationCustomResourceEvent {
  const common = {
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:release',
    ResponseURL: 'https://cloudformation-custom-resource-response.example/response?signed',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/DomainSentinel/1',
    RequestId: 'request-1',
    LogicalResourceId: 'AccountSettingsRelease198FF876',
    ResourceType: 'Custom::AccountSettingsRelease',
    ResourceProperties: { ServiceToken: 'token', ...properties },
  };
  if (type === 'Create') return { ...common, RequestType: 'Create' };
  if (type === 'Update')
    return {
      ...common,
      RequestType: 'Update',
      PhysicalResourceId: RELEASE_PHYSICAL_ID,
      OldResourceProperties: { ServiceToken: 'token', ...old },
    };
  return { ...common, RequestType: 'Delete', PhysicalResourceId: RELEASE_PHYSICAL_ID };
}
