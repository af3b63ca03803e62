import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { STATE_TABLE_DEFINITION } from '../functions/aws/state-table-definition';
import { STATE_ENV } from '../functions/core/memory/state-config';
import { type AccountScanInput, accountRawSettings, accountScope } from '../functions/core/scan/accounts';
import { parseSetting } from '../functions/core/scan/config';

const ATTRIBUTE_TYPES = {
  S: dynamodb.AttributeType.STRING,
  N: dynamodb.AttributeType.NUMBER,
  B: dynamodb.AttributeType.BINARY,
} as const;

/** The actions the DynamoDB state store uses, and no others. */
export const STATE_TABLE_ACTIONS = [
  'dynamodb:Query',
  'dynamodb:UpdateItem',
  'dynamodb:BatchWriteItem',
] as const;

/** IAM's StringLike wildcards (and its `$`) in `text`, written so a pattern matches them as themselves. */
const likeLiteral = (text: string): string => text.replace(/[$*?]/g, (c) => `\${${c}}`);

/**
 * The partitions of one state scope as `dynamodb:LeadingKeys` patterns: the scope's own (its
 * `#meta`, contacts, restore claims and audit trail) and its shards (`<scope>#0` … `#15`). A scope
 * holds no `#` (a base URL has no fragment, an account name none), so `<scope>#*` is no other scope.
 */
export const scopePartitions = (scope: string): string[] => [likeLiteral(scope), `${likeLiteral(scope)}#*`];

/** Characters the web function's partition patterns may take in its role's policy (IAM holds 10 240 in all). */
export const PARTITION_PATTERNS_CHARS = 2_500;

/**
 * The state partitions the web function serves, as `dynamodb:LeadingKeys` patterns, from the scopes
 * it derives (functions/handlers/web.ts, accounts-web.ts): the reseller base URL's; with several
 * accounts each account's (its name at its own resellerBaseUrl, or the deployment's), never the
 * deployment's own. Accounts too many to list within {@link PARTITION_PATTERNS_CHARS} are given as
 * any account at their resellers (`account * at <url>`), and failing that as any account (`account *`).
 */
export function servedPartitions(resellerBaseUrl: string, accounts?: readonly AccountScanInput[]): string[] {
  const url = (raw: string | undefined) => parseSetting('resellerBaseUrl', raw);
  if (!accounts) return scopePartitions(url(resellerBaseUrl));
  const urls = accounts.map((item) => url(accountRawSettings({ resellerBaseUrl }, item).resellerBaseUrl));
  const exact = accounts.flatMap((item, i) => scopePartitions(accountScope(urls[i] as string, item.account)));
  const perReseller = [...new Set(urls)].flatMap((u) => {
    const anyAccount = `account * at ${likeLiteral(u)}`;
    return [anyAccount, `${anyAccount}#*`];
  });
  const fits = (patterns: string[]) => JSON.stringify(patterns).length <= PARTITION_PATTERNS_CHARS;
  return [exact, perReseller].find(fits) ?? ['account *'];
}

export interface StateTableProps {
  /**
   * An existing table to keep the state in: the one an earlier deployment kept when it was
   * destroyed (output StateTableName), so a redeploy remembers what it announced.
   * @default - a new table
   */
  readonly tableName?: string;
}

/**
 * Memory between scans: the DynamoDB table built from the one definition `sentinel state init`
 * also uses. On demand, point-in-time recovery, encrypted, and kept when the stack is destroyed
 * (losing it means every finding is announced as new again, and departures go unnoticed once);
 * or the table such a deployment kept, adopted by name.
 */
export class StateTable extends Construct {
  readonly table: dynamodb.ITable;
  /** Whether the table is an earlier deployment's, adopted by name (not a resource of this stack). */
  readonly adopted: boolean;

  constructor(scope: Construct, id: string, props: StateTableProps = {}) {
    super(scope, id);
    this.adopted = props.tableName !== undefined;
    if (props.tableName) {
      this.table = dynamodb.Table.fromTableName(this, 'Table', props.tableName);
      return;
    }
    const { partitionKey, sortKey } = STATE_TABLE_DEFINITION;
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: partitionKey.name, type: ATTRIBUTE_TYPES[partitionKey.type] },
      sortKey: { name: sortKey.name, type: ATTRIBUTE_TYPES[sortKey.type] },
      billingMode:
        STATE_TABLE_DEFINITION.billingMode === 'PAY_PER_REQUEST'
          ? dynamodb.BillingMode.PAY_PER_REQUEST
          : dynamodb.BillingMode.PROVISIONED,
      pointInTimeRecoverySpecification: {
        pointInTimeRecoveryEnabled: STATE_TABLE_DEFINITION.pointInTimeRecovery,
      },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /**
   * Lets `fn` keep state here: sets the variable naming the table and grants exactly the store's
   * actions; given `partitions` (`dynamodb:LeadingKeys` patterns, {@link servedPartitions}), on those only.
   */
  grantReadWrite(fn: lambda.Function, partitions?: readonly string[]): void {
    fn.addEnvironment(STATE_ENV.tableName, this.table.tableName);
    if (!partitions) {
      this.table.grant(fn, ...STATE_TABLE_ACTIONS);
      return;
    }
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: [...STATE_TABLE_ACTIONS],
      resourceArns: [this.table.tableArn],
      // ForAllValues: a batch is allowed only when every item's partition is one of these.
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...partitions] } },
    });
  }
}
