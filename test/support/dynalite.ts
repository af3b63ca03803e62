import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';

/**
 * dynalite, an in-process DynamoDB, on loopback, for the real SDK client. Its tables are ACTIVE at
 * once unless `createTableMs` keeps a new one CREATING that long, as DynamoDB does.
 */
export async function startDynalite({ createTableMs = 0 }: { readonly createTableMs?: number } = {}) {
  const server = dynalite({ createTableMs, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sdkEnv = {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
  return {
    endpoint,
    sdkEnv,
    client: () =>
      new DynamoDBClient({
        endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
