/**
 * domain-sentinel as a library for your own CDK app:
 *
 * ```ts
 * const stack = new Stack(app, 'Sentinel', { env: { account: '123456789012', region: 'eu-west-1' } });
 * new DomainSentinel(stack, 'Acme', { resellerBaseUrl: 'https://api.reseller.example', alertEmails: ['you@example.nl'] });
 * ```
 *
 * The props are the deploy settings of `cdk deploy -c key=value` and of a settings file, validated
 * by the same schema (docs/deploy.md).
 */
export { AccountScans, type AccountScansProps } from './account-scans';
export { AlertTopic, type AlertTopicProps } from './alerts';
export {
  type AccountSettings,
  closestSetting,
  type DeploySettings,
  DeploySettingsSchema,
  loadDeploySettings,
  parseAccounts,
  parseSentinelSettings,
  readAccountsFile,
  readSettingsFile,
  type SentinelSettings,
  SentinelSettingsSchema,
} from './config';
export { DomainSentinel, type DomainSentinelProps, NO_ALERT_SUBSCRIBER } from './domain-sentinel';
export { ReportBucket, type ReportBucketProps } from './report-bucket';
export { Scanner, type ScannerProps } from './scanner';
export { SecretParameter, type SecretParameterProps } from './secret-parameter';
export { DomainSentinelStack, type DomainSentinelStackProps } from './stack';
export { StateTable } from './state-table';
export { Watchdog, type WatchdogProps } from './watchdog';
export { WebApi, type WebApiProps } from './web-api';
