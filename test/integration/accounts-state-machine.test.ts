import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { type CfnResource, NestedStack } from 'aws-cdk-lib';
import { Template as CdkTemplate } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable } from '../../functions/aws/dynamodb-state-store';
import { SsmSecretSource } from '../../functions/aws/secrets';
import { ACCOUNT_DIRECTORY_KEY, MAX_ACCOUNTS } from '../../functions/core/scan/accounts';
import { awsAccountScanDeps } from '../../functions/handlers/account-deps';
import { handleScheduledScan, type ScheduledScanDeps } from '../../functions/handlers/scheduled-scan';
import { generatePortfolio, type Portfolio } from '../../functions/simulator/portfolio';
import { type Simulator, startSimulator } from '../../functions/simulator/server';
import { ACCOUNT_SCAN_STATES } from '../../lib/account-scans';
import { type Template, TemplateResolver } from '../deploy/template';
import { type Json, type Machine, runStateMachine, TaskFailedError } from '../support/asl';
import { findingKeys, runCli } from '../support/cli';
import { startDynalite } from '../support/dynalite';
import { type SnsEnvelope, sqsVariant, startSnsEmulator } from '../support/sns-emulator';
import { synthStack } from '../support/stack';

/**
 * The state machine of a three-account deployment, run locally (issue 22): its synthesized
 * definition interpreted state by state (test/support/asl.ts; no Step Functions Local here), each
 * Map item invoking the scan function's own handler with the item as its event, against the
 * simulator (one key per account, one of them refused), SNS/SQS in fauxqs with the stack's own
 * filter policy, the state in dynalite, and the report bucket in s3rver holding the accounts.json
 * the deploy writes (its deploy-time call's own body), from which each scan reads its item.
 */

const KEYS = {
  'brand-a': 'sk_live_sfn_brand_a_0123456789ab',
  'brand-b': 'sk_live_sfn_brand_b_0123456789ab',
  'brand-c': 'sk_live_sfn_wrong_0123456789abcd',
};
const SIGNING_KEY = 'sfn-signing-key-0123456789abcdef0123456789';
const ACCOUNTS = [
  { name: 'brand-a', apiKeyParameter: '/ds/brand-a/api-key', alertEmails: ['a@example.nl'] },
  { name: 'brand-b', apiKeyParameter: '/ds/brand-b/api-key', accountLabel: 'Brand B' },
  { name: 'brand-c', apiKeyParameter: '/ds/brand-c/api-key' },
];
const ENV = { account: '123456789012', region: 'eu-west-1', stackName: 'DomainSentinel' };
const NOW = Date.now();
const portfolios: Record<string, Portfolio> = {
  'brand-a': generatePortfolio({ domains: 70, seed: 31, now: NOW }),
  'brand-b': generatePortfolio({ domains: 40, seed: 32, now: NOW }),
};
const truthKeys = (p: Portfolio) => p.truth.findings.map((f) => `${f.key} ${f.kind} ${f.severity}`).sort();

const ssm = mockClient(SSMClient);
let dir: string;
let sim: Simulator;
let emulator: Awaited<ReturnType<typeof startSnsEmulator>>;
let dynalite: Awaited<ReturnType<typeof startDynalite>>;
let s3server: S3rver;
let s3: S3Client;
/** accounts.json as the deploy's call writes it. */
let directoryBody: string;
let resolver: TemplateResolver;
/** The parent's resolver and one per nested stack (the accounts' groups: their recipients and alarms). */
let resolvers: TemplateResolver[];
let definition: Machine;
let scanArn: string;
let scanEnv: Record<string, string>;
let queues: { brandA: string; everything: string };
const dimensions: string[] = [];
/** Every request the scans sent to the reseller. */
const resellerRequests: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sentinel-sfn-'));
  const file = join(dir, 'accounts.json');
  writeFileSync(file, JSON.stringify({ accounts: ACCOUNTS }));
  const { stack, template } = synthStack({ accounts: file, accountConcurrency: '2' });
  resolver = new TemplateResolver(template.toJSON() as Template, ENV);
  resolvers = [
    resolver,
    ...stack.node
      .findAll()
      .filter((c): c is NestedStack => c instanceof NestedStack)
      .map((nested) => {
        const id = stack.getLogicalId(nested.nestedStackResource as CfnResource);
        const parameters = resolver.resolve(resolver.resource(id).Properties?.Parameters ?? {});
        return new TemplateResolver(
          CdkTemplate.fromStack(nested).toJSON() as Template,
          ENV,
          parameters as Record<string, string>,
        );
      }),
  ];
  const [machine] = resolver.ofType('AWS::StepFunctions::StateMachine');
  definition = JSON.parse(
    resolver.string(resolver.resource(machine as string).Properties?.DefinitionString, 'definition'),
  ) as Machine;
  const scanId = stack.getLogicalId(stack.scan.fn.node.defaultChild as never);
  scanArn = resolver.attribute(scanId, 'Arn');

  sim = await startSimulator({
    portfolio: portfolios['brand-a'] as Portfolio,
    apiKey: KEYS['brand-a'],
    accounts: [{ apiKey: KEYS['brand-b'], portfolio: portfolios['brand-b'] as Portfolio }],
  });
  emulator = await startSnsEmulator();
  dynalite = await startDynalite();
  await createStateTable(dynalite.client(), 'sfn-state');
  s3server = new S3rver({ port: 0, address: '127.0.0.1', directory: join(dir, 's3'), silent: true });
  const { port: s3port } = await s3server.run();
  s3 = new S3Client({
    endpoint: `http://127.0.0.1:${s3port}`,
    region: 'eu-west-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const topic = await emulator.topic('sfn-alerts');
  // brand-a's recipient, subscribed with the very filter policy the stack gives it.
  // In the nested stack of brand-a's group.
  const subscription = resolvers
    .flatMap((r) => r.ofType('AWS::SNS::Subscription').map((id) => r.resource(id)))
    .find((r) => r.Properties?.Endpoint === 'a@example.nl') as unknown as {
    Properties: { FilterPolicy: Record<string, unknown> };
  };
  expect(subscription.Properties.FilterPolicy).toEqual({ account: ['brand-a'] });
  queues = {
    brandA: await emulator.queueSubscribedTo(topic, 'sfn-brand-a', subscription.Properties.FilterPolicy),
    everything: await emulator.queueSubscribedTo(topic, 'sfn-everything'),
  };
  // The function's environment as the template gives it; only what points outside is replaced.
  scanEnv = {
    ...(resolver.resolve(
      (resolver.resource(scanId).Properties as { Environment: { Variables: object } }).Environment.Variables,
    ) as Record<string, string>),
    RESELLER_BASE_URL: sim.url,
    ALERT_TOPIC_ARN: topic,
    STATE_TABLE_NAME: 'sfn-state',
  };
  // accounts.json where the scan function finds it: the bucket its environment names, with the
  // body of the stack's own deploy-time putObject of that key.
  const write = resolver
    .ofType('Custom::AWS')
    .map((id) => JSON.parse(String(resolver.resolve(resolver.resource(id).Properties?.Create))))
    .find((call) => call.action === 'putObject' && call.parameters.Key === ACCOUNT_DIRECTORY_KEY);
  expect(write.parameters.Bucket).toBe(scanEnv.REPORT_BUCKET);
  directoryBody = write.parameters.Body;
  await s3.send(new CreateBucketCommand({ Bucket: write.parameters.Bucket }));
  await s3.send(
    new PutObjectCommand({
      Bucket: write.parameters.Bucket,
      Key: ACCOUNT_DIRECTORY_KEY,
      Body: directoryBody,
    }),
  );
  ssm
    .on(GetParameterCommand, { Name: scanEnv.LINK_SIGNING_KEY_PARAMETER })
    .resolves({ Parameter: { Value: SIGNING_KEY } });
  for (const account of ACCOUNTS)
    ssm
      .on(GetParameterCommand, { Name: account.apiKeyParameter })
      .resolves({ Parameter: { Value: KEYS[account.name as keyof typeof KEYS] } });
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await emulator?.close();
  await dynalite?.close();
  s3?.destroy();
  await s3server?.close();
  ssm.restore();
  rmSync(dir, { recursive: true, force: true });
});

/** The scan function's handler as the Lambda runs it, with the emulators' clients. */
function scanDeps(options: { env?: Record<string, string>; bucket?: string | null } = {}): ScheduledScanDeps {
  const ssmClient = new SSMClient({ region: 'eu-west-1' });
  const env = options.env ?? scanEnv;
  const bucket = options.bucket === undefined ? scanEnv.REPORT_BUCKET : (options.bucket ?? undefined);
  return {
    env,
    fetch: async (input, init) => {
      resellerRequests.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    },
    secrets: new SsmSecretSource(ssmClient, scanEnv),
    sns: emulator.snsClient(),
    dynamodb: dynalite.client(),
    logger: { info: () => undefined, error: () => undefined },
    metrics: {
      addMetric: () => undefined,
      publishStoredMetrics: () => undefined,
      addDimension: (name: string, value: string) => {
        dimensions.push(`${name}=${value}`);
      },
    } as unknown as ScheduledScanDeps['metrics'],
    accounts: awsAccountScanDeps(ssmClient, s3, env, bucket),
  };
}

/** One execution: every Lambda task runs the handler; every AWS SDK task is recorded. */
async function execute(
  sdk: (service: string, action: string, parameters: Json) => Promise<Json> = async () => ({}),
) {
  const invocations: Json[] = [];
  const sdkCalls: Array<{ service: string; action: string; parameters: Json }> = [];
  const execution = await runStateMachine(
    definition,
    {},
    {
      lambda: async (functionName, payload) => {
        expect(functionName).toBe(scanArn);
        invocations.push(payload);
        try {
          return (await handleScheduledScan(scanDeps(), 300_000, payload)) as unknown as Json;
        } catch (error) {
          // As Lambda reports a function's error to Step Functions: its type is the error's name.
          throw new TaskFailedError(
            (error as Error).name,
            JSON.stringify({ errorType: (error as Error).name, errorMessage: (error as Error).message }),
          );
        }
      },
      sdk: async (service, action, parameters) => {
        sdkCalls.push({ service, action, parameters });
        return sdk(service, action, parameters);
      },
    },
  );
  return { ...execution, invocations, sdkCalls };
}

describe('the state machine’s definition, run against the scan handler', { timeout: 60_000 }, () => {
  let first: Awaited<ReturnType<typeof execute>>;

  it('invokes the scan once per account with that account’s own item, two at a time, and tolerates the failed one', async () => {
    first = await execute();
    const items = (
      definition.States[ACCOUNT_SCAN_STATES.accounts] as unknown as { Result: { accounts: Json[] } }
    ).Result.accounts;
    // brand-c's scan was tried twice (its retry); every invocation was exactly an account's item.
    expect(first.invocations).toHaveLength(4);
    expect([...new Set(first.invocations.map((i) => JSON.stringify(i)))].sort()).toEqual(
      items.map((i) => JSON.stringify(i)).sort(),
    );
    expect(first.mostInFlight).toBe(2);
    expect(first.retries).toEqual([
      { state: ACCOUNT_SCAN_STATES.scan, error: 'AuthenticationError', intervalSeconds: 120 },
    ]);
    expect(first.output).toEqual([
      expect.objectContaining({ account: 'brand-a', published: true }),
      expect.objectContaining({ account: 'brand-b', published: true }),
      { account: 'brand-c', failed: true, error: 'AuthenticationError' },
    ]);
    expect([...new Set(dimensions)].sort()).toEqual([
      'account=brand-a',
      'account=brand-b',
      'account=brand-c',
    ]);
  });

  it('counts the failed account in the very metric its alarm watches, naming it', () => {
    // The failed account counts 1; each that was scanned counts 0, which is what clears its alarm.
    const counted = first.sdkCalls.map(({ parameters }) => {
      const [datum] = (
        parameters as {
          MetricData: Array<{ Value: number; Dimensions: Array<{ Name: string; Value: string }> }>;
        }
      ).MetricData;
      return `${datum?.Dimensions.find((d) => d.Name === 'account')?.Value}=${datum?.Value}`;
    });
    expect(counted.sort()).toEqual(['brand-a=0', 'brand-b=0', 'brand-c=1']);
    const call = first.sdkCalls.find(
      ({ parameters }) => (parameters as { MetricData: Array<{ Value: number }> }).MetricData[0]?.Value === 1,
    ) as (typeof first.sdkCalls)[number];
    expect(call.service).toBe('cloudwatch');
    expect(call.action).toBe('putMetricData');
    const { Namespace, MetricData } = call.parameters as {
      Namespace: string;
      MetricData: Array<{ MetricName: string; Dimensions: Array<{ Name: string; Value: string }> }>;
    };
    const [owner, alarm] = resolvers
      .flatMap((r) => r.ofType('AWS::CloudWatch::Alarm').map((id) => [r, id] as const))
      .find(
        ([r, id]) => r.resolve(r.resource(id).Properties?.AlarmName) === 'DomainSentinel/ScanFailed-brand-c',
      ) as readonly [TemplateResolver, string];
    const watched = owner.resolve(owner.resource(alarm).Properties) as {
      Namespace: string;
      MetricName: string;
      Dimensions: Array<{ Name: string; Value: string }>;
    };
    expect(Namespace).toBe(watched.Namespace);
    expect(MetricData[0]?.MetricName).toBe(watched.MetricName);
    const sorted = (d: Array<{ Name: string; Value: string }>) =>
      [...d].sort((x, y) => x.Name.localeCompare(y.Name));
    expect(sorted(MetricData[0]?.Dimensions ?? [])).toEqual(sorted(watched.Dimensions));
  });

  it('publishes one message per account, each with its account attribute; the stack’s filter lets only brand-a’s through', async () => {
    const all = await emulator.drain(queues.everything);
    expect(all.map((m) => m.MessageAttributes.account?.Value).sort()).toEqual(['brand-a', 'brand-b']);
    const filtered = await emulator.drain(queues.brandA);
    expect(filtered.map((m) => m.MessageAttributes.account?.Value)).toEqual(['brand-a']);
    const report = JSON.parse(sqsVariant(filtered[0] as SnsEnvelope));
    expect(findingKeys(report)).toEqual(truthKeys(portfolios['brand-a'] as Portfolio));
    const fromB = all.find((m) => m.MessageAttributes.account?.Value === 'brand-b') as SnsEnvelope;
    expect(fromB.Subject).toMatch(/^domain-sentinel \[Brand B\]: /);
    // The JSON names the account as the subject does: the webhook subscriber labels chat from it.
    expect(JSON.parse(sqsVariant(fromB)).source).toMatchObject({
      account: 'brand-b',
      account_label: 'Brand B',
    });
    expect(findingKeys(JSON.parse(sqsVariant(fromB)))).toEqual(truthKeys(portfolios['brand-b'] as Portfolio));
  });

  it('is quiet the second time for every account that was read, each with its own memory', async () => {
    const second = await execute();
    expect(second.output).toEqual([
      expect.objectContaining({ account: 'brand-a', published: false }),
      expect.objectContaining({ account: 'brand-b', published: false }),
      { account: 'brand-c', failed: true, error: 'AuthenticationError' },
    ]);
    expect(await emulator.drain(queues.everything)).toEqual([]);
  });

  it('keeps the history of the largest deployment far inside Step Functions’ 25 000 events', () => {
    // This execution of three accounts, one of them failing through its retry and its metric,
    // took fewer than 50 events: even if every account of the largest deployment (MAX_ACCOUNTS)
    // took as many as these three together, the history would stay under a fifth of the limit.
    expect(first.history.length).toBeLessThan(50);
    expect(first.history.length * MAX_ACCOUNTS).toBeLessThan(25_000 / 5);
  });

  it('goes on when the count of a completed scan cannot be put: the scan was done, and the others still run', async () => {
    const run = await execute(async (_service, _action, parameters) => {
      const [datum] = (parameters as { MetricData: Array<{ Value: number }> }).MetricData;
      if (datum?.Value === 0) throw new TaskFailedError('CloudWatch.InternalServiceException', 'try later');
      return {};
    });
    expect(run.output).toEqual([
      expect.objectContaining({ account: 'brand-a' }),
      expect.objectContaining({ account: 'brand-b' }),
      { account: 'brand-c', failed: true, error: 'AuthenticationError' },
    ]);
    // Quiet: the accounts were read before, with memory.
    expect(await emulator.drain(queues.everything)).toEqual([]);
  });

  it('refuses an input that names another account’s state, a table or a topic', async () => {
    // An item cannot carry a state scope, a table or a topic of its own: only its account's settings.
    await expect(
      handleScheduledScan(scanDeps(), 300_000, {
        account: 'brand-a',
        scope: `account brand-b at ${sim.url}`,
      }),
    ).rejects.toThrow("the scan's input is not one account's scan: the input has unknown field(s) scope");
    await expect(
      handleScheduledScan(scanDeps(), 300_000, { account: 'brand-a', settings: { stateTableName: 'other' } }),
    ).rejects.toThrow('the input has unknown field(s) settings');
    // And without an account, a scan function of accounts scans nothing.
    await expect(handleScheduledScan(scanDeps(), 300_000, {})).rejects.toThrow(
      'this deployment scans the accounts of its accounts file',
    );
  });
});

describe('the scan’s check of its input against the deployed accounts.json', { timeout: 60_000 }, () => {
  const ssmReads = () => ssm.commandCalls(GetParameterCommand).length;

  /** Runs the handler with `input`; what it threw, and whether it read a key or sent a request. */
  async function refusal(input: unknown, options: Parameters<typeof scanDeps>[0] = {}) {
    const reads = ssmReads();
    const requests = resellerRequests.length;
    const marks = dimensions.length;
    const error = await handleScheduledScan(scanDeps(options), 300_000, input).then(
      () => null,
      (e: Error) => e,
    );
    return {
      error,
      keysRead: ssmReads() - reads,
      requestsSent: resellerRequests.length - requests,
      dimensions: dimensions.slice(marks),
    };
  }

  it('scans the account its input names with its deployed item: its own key parameter and settings', async () => {
    const item = (JSON.parse(directoryBody) as { accounts: Array<{ account: string }> }).accounts.find(
      (a) => a.account === 'brand-b',
    );
    expect(item).toEqual({
      account: 'brand-b',
      apiKeyParameter: '/ds/brand-b/api-key',
      settings: { accountLabel: 'Brand B' },
    });
    const reads = ssmReads();
    const result = await handleScheduledScan(scanDeps(), 300_000, { account: 'brand-b' });
    expect(result.account).toBe('brand-b');
    expect(result.domainsScanned + result.problems).toBe((portfolios['brand-b'] as Portfolio).domains.length);
    const names = ssm
      .commandCalls(GetParameterCommand)
      .slice(reads)
      .map((c) => c.args[0].input.Name);
    expect(names).toContain('/ds/brand-b/api-key');
    expect(names).not.toContain('/ds/brand-a/api-key');
  });

  it('refuses an input that carries a key parameter or settings, before reading a key or sending a request', async () => {
    // Brand-a's name with brand-b's key, or brand-b with settings of its caller's: the input names an account only.
    for (const input of [
      { account: 'brand-a', apiKeyParameter: '/ds/brand-b/api-key' },
      { account: 'brand-b', settings: { accountLabel: 'Brand A' } },
      { account: 'brand-b', apiKeyParameter: '/ds/brand-b/api-key', settings: { accountLabel: 'Brand B' } },
    ]) {
      const outcome = await refusal(input);
      expect(outcome.error?.name).toBe('ConfigError');
      expect(outcome.error?.message).toMatch(
        /^the scan's input is not one account's scan: the input has unknown field\(s\) (apiKeyParameter|settings)/,
      );
      expect(outcome.error?.message).not.toContain('/ds/brand-b/api-key');
      expect(outcome).toMatchObject({ keysRead: 0, requestsSent: 0, dimensions: [] });
    }
  });

  it('names the refused account’s own key parameter, not RESELLER_API_KEY, which no Lambda reads', async () => {
    const error = await handleScheduledScan(scanDeps(), 300_000, { account: 'brand-c' }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.name).toBe('AuthenticationError');
    expect(error?.message).toMatch(/HTTP 401\) for .*; check SSM parameter \/ds\/brand-c\/api-key \(/);
    expect(error?.message).not.toContain('RESELLER_API_KEY');
    expect(error?.message).not.toContain(KEYS['brand-c']);
  });

  it('refuses an account the deployment does not have', async () => {
    const outcome = await refusal({ account: 'brand-z' });
    expect(outcome.error?.message).toBe(
      "refused the scan of account brand-z: the deployment's accounts (accounts.json in the report bucket) have no account of that name; only the state machine's items are scanned",
    );
    // No metric of an account the deployment does not have.
    expect(outcome).toMatchObject({ keysRead: 0, requestsSent: 0, dimensions: [] });
  });

  it('refuses every account when the deployed accounts cannot be read, or there is no bucket to read them from', async () => {
    const item = { account: 'brand-a' };
    await s3.send(new DeleteObjectCommand({ Bucket: scanEnv.REPORT_BUCKET, Key: ACCOUNT_DIRECTORY_KEY }));
    try {
      const missing = await refusal(item);
      expect(missing.error?.message).toBe(
        `s3://${scanEnv.REPORT_BUCKET}/accounts.json is missing: the deploy writes it; deploy the stack again`,
      );
      expect(missing).toMatchObject({ keysRead: 0, requestsSent: 0 });
      await s3.send(
        new PutObjectCommand({
          Bucket: scanEnv.REPORT_BUCKET,
          Key: ACCOUNT_DIRECTORY_KEY,
          Body: '{"accounts": "all"}',
        }),
      );
      const tampered = await refusal(item);
      expect(tampered.error?.message).toMatch(/accounts\.json is not a list of accounts \(accounts: /);
      expect(tampered).toMatchObject({ keysRead: 0, requestsSent: 0 });
    } finally {
      await s3.send(
        new PutObjectCommand({
          Bucket: scanEnv.REPORT_BUCKET,
          Key: ACCOUNT_DIRECTORY_KEY,
          Body: directoryBody,
        }),
      );
    }
    const unset = await refusal(item, { bucket: null });
    expect(unset.error?.message).toBe(
      "REPORT_BUCKET is not set: the scan of an account reads its item from the deployment's accounts.json in the report bucket",
    );
    expect(unset).toMatchObject({ keysRead: 0, requestsSent: 0 });
    // And a scan function of a deployment without accounts scans no account's input at all.
    const { ACCOUNTS_ONLY: _, ...single } = scanEnv;
    const notAccounts = await refusal(item, { env: single });
    expect(notAccounts.error?.message).toBe(
      'this scan function cannot scan an account of several (account brand-a)',
    );
    expect(notAccounts).toMatchObject({ keysRead: 0, requestsSent: 0 });
    // With accounts.json back in place, the same item is scanned.
    await expect(handleScheduledScan(scanDeps(), 300_000, item)).resolves.toMatchObject({
      account: 'brand-a',
    });
  });
});

describe('a rotated account key on AWS (issue 33)', { timeout: 60_000 }, () => {
  it('is refused with the command that rebinds the account’s scope of the table; once run, the next scan goes on', async () => {
    const item = { account: 'brand-a' };
    const rotated = 'sk_live_sfn_brand_a_rotated_01234';
    // The reseller rotates brand-a's key, and the new key goes into its SSM parameter.
    sim.rotateKey(KEYS['brand-a'], rotated);
    ssm.on(GetParameterCommand, { Name: '/ds/brand-a/api-key' }).resolves({ Parameter: { Value: rotated } });
    const refused = await handleScheduledScan(scanDeps(), 300_000, item).then(
      () => null,
      (e: Error) => e,
    );
    const command = `sentinel state rebind dynamodb:sfn-state --account brand-a --accounts ACCOUNTS_FILE --base-url ${sim.url} --yes`;
    expect(refused?.message).toContain(`if its key was rotated: ${command}`);
    expect(refused?.message).not.toContain(rotated);
    // On an operator's machine: the accounts file deployed (with brand-a's apiKeyEnv), the new key.
    const file = join(dir, 'accounts.json');
    writeFileSync(
      file,
      JSON.stringify({ accounts: [{ ...ACCOUNTS[0], apiKeyEnv: 'BRAND_A_KEY' }, ...ACCOUNTS.slice(1)] }),
    );
    const rebind = await runCli(command.replace('ACCOUNTS_FILE', file).split(' ').slice(1), {
      BRAND_A_KEY: rotated,
      ...dynalite.sdkEnv,
    });
    expect(rebind.code, rebind.stderr).toBe(0);
    await expect(handleScheduledScan(scanDeps(), 300_000, item)).resolves.toMatchObject({
      account: 'brand-a',
      published: false,
    });
  });
});
