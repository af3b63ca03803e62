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
export { ACCOUNT_GROUPS, AccountGroups, type AccountGroupsProps, accountGroupOf } from './account-groups';
export { AccountScans, type AccountScansProps } from './account-scans';
export { AccountSettings as AccountSettingsOwner, type AccountSettingsProps } from './account-settings';
export { AlertMetrics, AlertTopic, type AlertTopicProps, type GroupRecipients } from './alerts';
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
export {
  DomainSentinel,
  type DomainSentinelProps,
  NO_ALERT_SUBSCRIBER,
} from './domain-sentinel';
export { HeldSms, type HeldSmsProps } from './held-sms';
export { AWS_LIMITS, limitProblems } from './limits';
export { CustomMetricFactory, type MetricReading } from './metrics';
export { ReportBucket, type ReportBucketProps } from './report-bucket';
export { ScanMetrics, Scanner, type ScannerProps } from './scanner';
export { SecretParameter, type SecretParameterProps } from './secret-parameter';
export { DomainSentinelStack, type DomainSentinelStackProps } from './stack';
export { StateTable, type StateTableProps } from './state-table';
export { type AlarmSpec, Watchdog, type WatchdogProps } from './watchdog';
export { WEB_ROUTES, WebApi, type WebApiProps, WebMetrics, type WebRoute } from './web-api';
