import { Logger } from '@aws-lambda-powertools/logger';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { SNSClient } from '@aws-sdk/client-sns';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { type SdkTimeouts, timedClientConfig } from '../aws/sdk-timeouts';
import { handleReleaseEvent, type ReleaseDeps } from './settings-release-handler';

/**
 * Each call may take 5 s and is tried 3 times (at most 15.6 s with the SDK's waits): both settings
 * read and cleared (four calls, 62.4 s) stay well inside the function's 2 minutes, so CloudFormation
 * is always answered.
 */
export const RELEASE_SDK_TIMEOUTS: SdkTimeouts = {
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 5_000,
  maxAttempts: 3,
};

/** The release's clients, each call bounded by `timeouts` (a test gives small ones). */
export function releaseDeps(timeouts: SdkTimeouts = RELEASE_SDK_TIMEOUTS): ReleaseDeps {
  const client = timedClientConfig(timeouts);
  return {
    apiGateway: new APIGatewayClient(client),
    sns: new SNSClient(client),
    logger: new Logger({ serviceName: 'domain-sentinel-settings-release' }),
  };
}

// Clients at module scope.
const deps = releaseDeps();

/** CloudFormation's custom resource Custom::AccountSettingsRelease (lib/account-settings.ts). */
export const handler = async (event: CloudFormationCustomResourceEvent) => handleReleaseEvent(event, deps);
