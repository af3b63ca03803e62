import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { STATE_TABLE_DEFINITION } from '../functions/aws/state-table-definition';
import { STATE_ENV } from '../functions/core/memory/state-config';

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

  /** Lets `fn` keep state here: sets the variable naming the table and grants exactly the store's actions. */
  grantReadWrite(fn: lambda.Function): void {
    fn.addEnvironment(STATE_ENV.tableName, this.table.tableName);
    this.table.grant(fn, ...STATE_TABLE_ACTIONS);
  }
}
