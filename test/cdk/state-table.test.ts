import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createStateTableInput } from '../../functions/aws/dynamodb-state-store';
import type { DomainSentinelStack } from '../../lib/stack';
import { synthStack } from '../support/stack';

const synth = synthStack;

let template: Template;
let stack: DomainSentinelStack;
beforeAll(() => {
  ({ template, stack } = synth());
});
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);

describe('state table', () => {
  it('is on demand, recoverable to any point, encrypted, and kept when the stack goes', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      },
    });
  });

  it('has the very keys and billing that `sentinel state init` creates', () => {
    const input = createStateTableInput('t');
    const [table] = Object.values(template.findResources('AWS::DynamoDB::Table'));
    expect(table?.Properties.KeySchema).toEqual(input.KeySchema);
    expect(table?.Properties.AttributeDefinitions).toEqual(input.AttributeDefinitions);
    expect(table?.Properties.BillingMode).toBe(input.BillingMode);
  });

  it('names itself to the scan function and lets it query, update and batch-write that table only', () => {
    const tableId = logicalId(stack.state.table);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Environment: { Variables: Match.objectLike({ STATE_TABLE_NAME: { Ref: tableId } }) },
    });
    const scanRole = stack.getLogicalId(stack.scan.fn.role?.node.defaultChild as never);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: scanRole }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
            Effect: 'Allow',
            Resource: [{ 'Fn::GetAtt': [tableId, 'Arn'] }],
          },
        ]),
      },
    });
  });

  it('publishes its name as an output, for state reset', () => {
    template.hasOutput('StateTableName', { Value: { Ref: logicalId(stack.state.table) } });
  });

  it('lets the web function (snooze and acknowledge links) use the store the same way, and nothing more', () => {
    const tableId = logicalId(stack.state.table);
    const webRole = stack.getLogicalId(stack.web.fn.role?.node.defaultChild as never);
    const policies = template.findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: webRole }] },
    });
    const dynamo = Object.values(policies)
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter((st: { Action: string | string[] }) =>
        [st.Action].flat().some((a) => a.startsWith('dynamodb:')),
      );
    expect(dynamo).toEqual([
      {
        Action: ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
        Effect: 'Allow',
        Resource: [{ 'Fn::GetAtt': [tableId, 'Arn'] }],
      },
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('web links'),
      Environment: { Variables: Match.objectLike({ STATE_TABLE_NAME: { Ref: tableId } }) },
    });
  });
});
