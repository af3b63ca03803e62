/**
 * The state table, defined once: the CDK construct (lib/state-table.ts) and
 * `sentinel state init dynamodb:TABLE` (CreateTable) both build it from this, so a table made on
 * a laptop and the deployed one cannot drift apart. Plain data: no AWS SDK or CDK import here.
 */
export const STATE_TABLE_DEFINITION = {
  /** One partition per account: the reseller base URL the state belongs to. */
  partitionKey: { name: 'pk', type: 'S' },
  /** `#meta` (generation, lease, account-wide fields), `contact#…`, `audit#…`, `restore#…`; the domains in shard partitions (dynamodb-buckets.ts). */
  sortKey: { name: 'sk', type: 'S' },
  /** On-demand: a scan writes in bursts once a day or so; nothing to provision or scale. */
  billingMode: 'PAY_PER_REQUEST',
  pointInTimeRecovery: true,
  /** Server-side encryption with the AWS-managed key (aws/dynamodb). */
  encryption: 'AWS_MANAGED',
} as const;

/** The sort key of the item holding generation, lease and the account-wide fields. */
export const META_SORT_KEY = '#meta';
