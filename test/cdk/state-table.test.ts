import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createStateTableInput } from '../../functions/aws/dynamodb-state-store';
import { accountScope } from '../../functions/core/scan/accounts';
import type { DomainSentinelStack } from '../../lib/stack';
import { PARTITION_PATTERNS_CHARS, servedPartitions } from '../../lib/state-table';
import type { AwsCall } from '../deploy/aws-calls';
import { denials, describeDenial } from '../deploy/iam';
import { type Template as Json, TemplateResolver } from '../deploy/template';
import { synthStack } from '../support/stack';

const synth = synthStack;

let template: Template;
let stack: DomainSentinelStack;
beforeAll(() => {
  ({ template, stack } = synth());
});
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);

/** The DynamoDB statements of the policies of `fn`'s role in `synthesized`. */
function dynamoStatements(synthesized: Template, fn: { role?: { node: { defaultChild?: unknown } } }) {
  const role = stack.getLogicalId(fn.role?.node.defaultChild as never);
  const policies = synthesized.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: role }] } });
  return Object.values(policies)
    .flatMap((p) => p.Properties.PolicyDocument.Statement)
    .filter((st: { Action: string | string[] }) => [st.Action].flat().some((a) => a.startsWith('dynamodb:')));
}

/** The one statement a function's role gets on the table: the store's actions, in `partitions` alone. */
const partitionGrant = (tableId: string, partitions: readonly string[]) => ({
  Action: ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
  Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitions } },
  Effect: 'Allow',
  Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
});

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

  it('names itself to the scan function and lets it query, update and batch-write its account’s partitions of that table only', () => {
    const tableId = logicalId(stack.state.table);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('scans the reseller account'),
      Environment: { Variables: Match.objectLike({ STATE_TABLE_NAME: { Ref: tableId } }) },
    });
    // The scope the scan keeps its state under (the base URL) and its shards alone.
    expect(dynamoStatements(template, stack.scan.fn)).toEqual([
      partitionGrant(tableId, ['https://api.reseller.example', 'https://api.reseller.example#*']),
    ]);
  });

  it('publishes its name as an output, for state reset', () => {
    template.hasOutput('StateTableName', { Value: { Ref: logicalId(stack.state.table) } });
  });

  it('lets the web function (snooze and acknowledge links) use the store the same way, and nothing more', () => {
    const tableId = logicalId(stack.state.table);
    // Its account's partition (the base URL) and shards alone: a batch with any other is refused.
    expect(dynamoStatements(template, stack.web.fn)).toEqual([
      partitionGrant(tableId, ['https://api.reseller.example', 'https://api.reseller.example#*']),
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('web links'),
      Environment: { Variables: Match.objectLike({ STATE_TABLE_NAME: { Ref: tableId } }) },
    });
  });
});

describe('the web function’s partitions of the state (dynamodb:LeadingKeys)', () => {
  const ENV = { account: '123456789012', region: 'eu-west-1', stackName: 'DomainSentinel' };
  const accounts = [
    { account: 'brand-a', apiKeyParameter: '/ds/brand-a', settings: {} },
    {
      account: 'brand-b',
      apiKeyParameter: '/ds/brand-b',
      settings: { resellerBaseUrl: 'https://other.example/api' },
    },
  ];
  const base = 'https://api.reseller.example';
  /** The same accounts as a deployment's settings give them. */
  const accountsSetting = accounts.map((a) => ({
    name: a.account,
    apiKeyParameter: a.apiKeyParameter,
    ...a.settings,
  }));
  const literal = (c: string) => `\${${c}}`;

  /** The calls IAM refuses the `fn` function of `context`'s stack, one per partition key value. */
  async function refusedPartitions(
    context: Record<string, unknown>,
    partitions: string[][],
    fn: 'web' | 'scan' = 'web',
  ) {
    const { stack: built, template: synthesized } = synth(context);
    const resolver = new TemplateResolver(synthesized.toJSON() as Json, ENV);
    const role = built.getLogicalId(built[fn].fn.role?.node.defaultChild as never);
    const table = resolver.attribute(built.getLogicalId(built.state.table.node.defaultChild as never), 'Arn');
    const calls: AwsCall[] = partitions.flatMap((keys) =>
      ['dynamodb:UpdateItem', 'dynamodb:Query', 'dynamodb:BatchWriteItem'].map((action) => ({
        caller: role,
        action,
        resource: table,
        context: { 'dynamodb:LeadingKeys': keys },
      })),
    );
    const refused = await denials(resolver, calls, (caller) => ({ roleId: caller, session: 'state-test' }));
    return refused.map(describeDenial).map((line) => line.replace(/ on .*: /, ': '));
  }

  it('lets one account’s web function use its partition and shards, and refuses any other or a batch reaching one', async () => {
    const refused = await refusedPartitions({}, [
      [base],
      [`${base}#0`, `${base}#15`],
      [accountScope(base, 'brand-a')],
      ['https://api.reseller.example.evil'],
      [base, 'https://other.example'],
    ]);
    expect(refused).toHaveLength(9);
    expect(new Set(refused)).toEqual(
      new Set(
        ['UpdateItem', 'Query', 'BatchWriteItem'].map((a) =>
          expect.stringMatching(`may not dynamodb:${a}: ImplicitlyDenied$`),
        ),
      ),
    );
  });

  it('with several accounts, lists each account’s scope at its own reseller, and not the deployment’s own', async () => {
    expect(servedPartitions(base, accounts)).toEqual([
      'account brand-a at https://api.reseller.example',
      'account brand-a at https://api.reseller.example#*',
      'account brand-b at https://other.example/api',
      'account brand-b at https://other.example/api#*',
    ]);
    const allowed = [
      [accountScope(base, 'brand-a')],
      [`${accountScope('https://other.example/api', 'brand-b')}#3`],
    ];
    const others = [[base], [accountScope(base, 'brand-b')], [accountScope(base, 'brand-c')]];
    // The scan function's role too: each of its runs is one account's, under that account's scope.
    for (const fn of ['web', 'scan'] as const) {
      expect(await refusedPartitions({ accounts: accountsSetting }, allowed, fn)).toEqual([]);
      expect(await refusedPartitions({ accounts: accountsSetting }, others, fn)).toHaveLength(9);
    }
  });

  it('refuses the scan function of one account another account’s partition', async () => {
    expect(await refusedPartitions({}, [[base], [`${base}#7`]], 'scan')).toEqual([]);
    const refused = await refusedPartitions(
      {},
      [[accountScope(base, 'brand-a')], [`${base}.evil#0`]],
      'scan',
    );
    expect(refused).toHaveLength(6);
  });

  it('matches a base URL’s *, ? and $ as themselves, not as wildcards', () => {
    expect(servedPartitions('https://api.reseller.example/*/$x')).toEqual([
      `https://api.reseller.example/${literal('*')}/${literal('$')}x`,
      `https://api.reseller.example/${literal('*')}/${literal('$')}x#*`,
    ]);
  });

  it('names accounts too many to list by their resellers, and failing that any account, within the size IAM holds', () => {
    const many = Array.from({ length: 100 }, (_, i) => ({
      account: `brand-${'x'.repeat(20)}-${i}`,
      apiKeyParameter: `/ds/${i}`,
      settings: {},
    }));
    expect(servedPartitions(base, many)).toEqual([
      'account * at https://api.reseller.example',
      'account * at https://api.reseller.example#*',
    ]);
    const ownResellers = many.map((a, i) => ({
      ...a,
      settings: { resellerBaseUrl: `https://reseller-${i}.${'long-'.repeat(10)}example` },
    }));
    expect(servedPartitions(base, ownResellers)).toEqual(['account *']);
    for (const list of [many, ownResellers, accounts])
      expect(JSON.stringify(servedPartitions(base, list)).length).toBeLessThanOrEqual(
        PARTITION_PATTERNS_CHARS,
      );
  });
});
