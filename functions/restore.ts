import { Logger } from '@aws-lambda-powertools/logger';
import { SSMClient } from '@aws-sdk/client-ssm';
import { createRestoreHandler } from './adapters/restore-handler';
import { SsmSecretSource } from './adapters/secrets';
import { settingsFromEnv } from './core/config';

const logger = new Logger({ serviceName: 'domain-sentinel-restore' });

/** API Gateway (REST, proxy integration) invokes this for GET/HEAD/POST /restore/{domain}. */
export const handler = createRestoreHandler({
  settings: () => settingsFromEnv(process.env),
  secrets: new SsmSecretSource(new SSMClient({}), process.env),
  log: (entry) =>
    entry.status >= 500
      ? logger.error('restore attempt', { ...entry })
      : logger.info('restore attempt', { ...entry }),
});
