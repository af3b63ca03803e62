import { Logger } from '@aws-lambda-powertools/logger';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { SNSClient } from '@aws-sdk/client-sns';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { handleReleaseEvent } from './settings-release-handler';

// Clients at module scope. Each call may take 5 s and is tried 3 times: both settings read and
// cleared stay well inside the function's timeout, so CloudFormation is always answered.
const client = { maxAttempts: 3, requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000 } };
const logger = new Logger({ serviceName: 'domain-sentinel-settings-release' });
const deps = { apiGateway: new APIGatewayClient(client), sns: new SNSClient(client), logger };

/** CloudFormation's custom resource Custom::AccountSettingsRelease (lib/account-settings.ts). */
export const handler = async (event: CloudFormationCustomResourceEvent) => handleReleaseEvent(event, deps);
