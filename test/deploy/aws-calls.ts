import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { STATE_TABLE_DEFINITION } from '../../functions/aws/state-table-definition';
import { listenOnLoopback } from '../support/loopback';

/**
 * What a function asks AWS for, as IAM sees it: an action on a resource with its request context.
 * The rehearsal records these from the wire (every request a bundle's SDK sends passes through a
 * recording proxy in front of the emulator), plus what AWS itself does with the caller's
 * permissions on the caller's behalf (SNS encrypting with the topic's key, SSM decrypting a
 * SecureString, S3 answering a missing key with ListBucket's say).
 */
export interface AwsCall {
  /** The function whose credentials signed the request (its access key id names it). */
  readonly caller: string;
  readonly action: string;
  readonly resource: string;
  /** A multi-valued key (`dynamodb:LeadingKeys`) holds its values as a list. */
  readonly context: Readonly<Record<string, string | readonly string[]>>;
  /** For a call AWS makes on the caller's behalf: the request it came from. */
  readonly via?: string;
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface Service {
  readonly name: string;
  /** The IAM calls one request makes, from its method, path and body. */
  calls(req: IncomingMessage, body: string): Array<Omit<AwsCall, 'caller'>>;
  /** Answers the request here instead of forwarding it (an operation the emulator lacks). */
  answer?(req: IncomingMessage, body: string): Answer | undefined;
  /** Calls that depend on the answer (S3's ListBucket check of a missing key). */
  after?(req: IncomingMessage, body: string, status: number): Array<Omit<AwsCall, 'caller'>>;
  /** Rewrites headers before forwarding (an emulator that checks the access key). */
  forwardHeaders?(headers: IncomingMessage['headers']): IncomingMessage['headers'];
  /** Rewrites the path and query before forwarding (a presigned URL's access key). */
  forwardPath?(path: string): string;
}

/**
 * The access key id that signed a request: `Credential=AKID/…` of SigV4, in its Authorization
 * header or, for a presigned URL (followed by whoever holds it, with its signer's permissions), in
 * its `X-Amz-Credential` query parameter.
 */
export const accessKeyOf = (req: IncomingMessage) =>
  /Credential=([^/,\s]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ??
  new URL(req.url ?? '/', 'http://aws').searchParams.get('X-Amz-Credential')?.split('/')[0] ??
  'anonymous';

/**
 * A recording proxy on 127.0.0.1: records the calls of every request, then answers it itself or
 * forwards it unchanged to `target` (an emulator). `callers` maps an access key id to the function
 * it was given to.
 */
export async function startRecordingProxy(
  service: Service,
  target: string | undefined,
  record: (call: AwsCall) => void,
  callerOf: (accessKeyId: string) => string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      const caller = callerOf(accessKeyOf(req));
      for (const call of service.calls(req, text)) record({ caller, ...call });
      const finish = (status: number) => {
        for (const call of service.after?.(req, text, status) ?? []) record({ caller, ...call });
      };
      const local = service.answer?.(req, text);
      if (local || !target) {
        const answer = local ?? { status: 500, headers: {}, body: `no emulator for ${service.name}` };
        res.writeHead(answer.status, answer.headers).end(answer.body);
        finish(answer.status);
        return;
      }
      const url = new URL(target);
      const headers = service.forwardHeaders?.({ ...req.headers }) ?? { ...req.headers };
      const upstream = request(
        {
          host: url.hostname,
          port: url.port,
          method: req.method,
          path: service.forwardPath?.(req.url ?? '/') ?? req.url,
          headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', () => finish(answer.statusCode ?? 502));
        },
      );
      upstream.on('error', (error) => res.writeHead(502).end(String(error)));
      upstream.end(body);
    });
  });
  return listenOnLoopback(server);
}

const form = (body: string) => new URLSearchParams(body);
const target = (req: IncomingMessage) => String(req.headers['x-amz-target'] ?? '');
const json = (body: string): Record<string, unknown> => (body ? JSON.parse(body) : {});

export interface Place {
  readonly account: string;
  readonly region: string;
}

/**
 * SNS (query protocol). Publishing to a topic with a KMS key makes SNS use that key as the
 * publisher: GenerateDataKey and Decrypt, via SNS. SetSMSAttributes and GetSMSAttributes, which the
 * emulator lacks, are answered here (the account's SMS attributes are the last ones set, in
 * `smsSettings`); setting a delivery-status role passes it to SNS.
 */
export function snsService(place: Place, topicKeys: ReadonlyMap<string, string>): Service {
  return {
    name: 'sns',
    calls(_req, body) {
      const params = form(body);
      const action = params.get('Action') ?? 'Unknown';
      const topic = params.get('TopicArn');
      const calls: Array<Omit<AwsCall, 'caller'>> = [
        { action: `sns:${action}`, resource: topic ?? '*', context: {} },
      ];
      const key = topic ? topicKeys.get(topic) : undefined;
      if (action === 'Publish' && topic && key)
        for (const kmsAction of ['kms:GenerateDataKey', 'kms:Decrypt'])
          calls.push({
            action: kmsAction,
            resource: key,
            context: {
              'kms:ViaService': `sns.${place.region}.amazonaws.com`,
              'kms:EncryptionContext:aws:sns:topicArn': topic,
            },
            via: `sns:Publish ${topic}`,
          });
      if (action === 'SetSMSAttributes') {
        const attributes = smsAttributes(params);
        const role = attributes.DeliveryStatusIAMRole;
        if (role)
          calls.push({
            action: 'iam:PassRole',
            resource: role,
            context: { 'iam:PassedToService': 'sns.amazonaws.com' },
            via: 'sns:SetSMSAttributes',
          });
      }
      return calls;
    },
    answer(_req, body) {
      const params = form(body);
      if (params.get('Action') === 'GetSMSAttributes') {
        const entries = Object.entries(smsSettings.at(-1) ?? {})
          .map(([k, v]) => `<entry><key>${xmlText(k)}</key><value>${xmlText(v)}</value></entry>`)
          .join('');
        return {
          status: 200,
          headers: { 'content-type': 'text/xml' },
          body: `<GetSMSAttributesResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><GetSMSAttributesResult><attributes>${entries}</attributes></GetSMSAttributesResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></GetSMSAttributesResponse>`,
        };
      }
      if (params.get('Action') !== 'SetSMSAttributes') return undefined;
      smsSettings.push(smsAttributes(params));
      return {
        status: 200,
        headers: { 'content-type': 'text/xml' },
        body: `<SetSMSAttributesResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><SetSMSAttributesResult/><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></SetSMSAttributesResponse>`,
      };
    },
  };
}

/** The account's SMS attributes as the rehearsal's deploy-time calls set them (or a test, as another team would). */
export const smsSettings: Array<Record<string, string>> = [];

const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function smsAttributes(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 1; params.has(`attributes.entry.${i}.key`); i++)
    out[params.get(`attributes.entry.${i}.key`) as string] = params.get(`attributes.entry.${i}.value`) ?? '';
  return out;
}

type Item = Record<string, { S?: string } | undefined>;
const PARTITION_KEY = STATE_TABLE_DEFINITION.partitionKey.name;

/** `dynamodb:LeadingKeys`, as DynamoDB sets it: the partition key values a request touches (none: no key). */
const leadingKeysOf = (values: readonly string[]): Record<string, readonly string[]> =>
  values.length > 0 ? { 'dynamodb:LeadingKeys': [...new Set(values)] } : {};

/** The partitions a batch's requests write (or read): each Put's item, each Delete's (or Get's) key. */
function batchPartitions(requests: unknown): string[] {
  if (!Array.isArray(requests) && typeof requests !== 'object') return [];
  const list = Array.isArray(requests) ? requests : ((requests as { Keys?: unknown[] }).Keys ?? []);
  return list.flatMap((r: { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } } & Item) => {
    const item = r.PutRequest?.Item ?? r.DeleteRequest?.Key ?? r;
    const value = item[PARTITION_KEY]?.S;
    return value === undefined ? [] : [value];
  });
}

/** The partition a request names: its Key or Item, or a query's equality on the partition key. */
function requestPartitions(input: Record<string, unknown>): string[] {
  const item = (input.Key ?? input.Item) as Item | undefined;
  const direct = item?.[PARTITION_KEY]?.S;
  if (direct !== undefined) return [direct];
  const condition = /^\s{0,8}(#?\w{1,64})\s{0,8}=\s{0,8}(:\w{1,64})/.exec(
    String(input.KeyConditionExpression ?? ''),
  );
  if (!condition) return [];
  const [, attribute = '', placeholder = ''] = condition;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Item;
  const value = values[placeholder]?.S;
  return (names[attribute] ?? attribute) === PARTITION_KEY && value !== undefined ? [value] : [];
}

/**
 * DynamoDB (JSON 1.0). A transaction needs each item's own action; a batch names its tables; a
 * query of an index is a call on the index. Each call carries the partitions it touches
 * (`dynamodb:LeadingKeys`), a value the rehearsal replaced (`asDeployed`: its own reseller's URL)
 * put back as deployed.
 */
export function dynamodbService(place: Place, asDeployed: ReadonlyMap<string, string> = new Map()): Service {
  const leadingKeys = (values: readonly string[]) =>
    leadingKeysOf(
      values.map((v) => [...asDeployed].reduce((out, [from, to]) => out.replaceAll(from, to), v)),
    );
  const table = (name: string) => `arn:aws:dynamodb:${place.region}:${place.account}:table/${name}`;
  return {
    name: 'dynamodb',
    calls(req, body) {
      const operation = target(req).split('.')[1] ?? 'Unknown';
      const input = json(body);
      if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
        const items = (input.TransactItems as Array<Record<string, { TableName: string }>>) ?? [];
        const actions: Record<string, string> = {
          Put: 'PutItem',
          Update: 'UpdateItem',
          Delete: 'DeleteItem',
          ConditionCheck: 'ConditionCheckItem',
          Get: 'GetItem',
        };
        return items.flatMap((item) =>
          Object.entries(item).map(([kind, spec]) => ({
            action: `dynamodb:${actions[kind] ?? kind}`,
            resource: table(spec.TableName),
            context: {},
            via: `dynamodb:${operation}`,
          })),
        );
      }
      if (operation === 'BatchWriteItem' || operation === 'BatchGetItem')
        return Object.entries((input.RequestItems as Record<string, unknown>) ?? {}).map(
          ([name, requests]) => ({
            action: `dynamodb:${operation}`,
            resource: table(name),
            context: leadingKeys(batchPartitions(requests)),
          }),
        );
      const name = String(input.TableName ?? '');
      const index = input.IndexName ? `/index/${input.IndexName}` : '';
      return [
        {
          action: `dynamodb:${operation}`,
          resource: `${table(name)}${index}`,
          context: leadingKeys(requestPartitions(input)),
        },
      ];
    },
  };
}

/**
 * S3 (REST, path style). A GET of a key that is not there is answered NoSuchKey only if the caller
 * may list the bucket at that prefix (else AccessDenied): that check is S3's, made with the caller's
 * permissions, so it is recorded as a call.
 */
export function s3Service(): Service {
  const parse = (req: IncomingMessage) => {
    const url = new URL(req.url ?? '/', 'http://s3');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    return { url, bucket, key: decodeURIComponent(rest.join('/')) };
  };
  return {
    name: 's3',
    calls(req) {
      const { url, bucket, key } = parse(req);
      if (!key) {
        if (url.searchParams.has('lifecycle'))
          return [
            {
              action: `s3:${req.method === 'GET' ? 'Get' : 'Put'}LifecycleConfiguration`,
              resource: `arn:aws:s3:::${bucket}`,
              context: {},
            },
          ];
        if (req.method === 'GET')
          return [
            {
              action: 's3:ListBucket',
              resource: `arn:aws:s3:::${bucket}`,
              context: { 's3:prefix': url.searchParams.get('prefix') ?? '' },
            },
          ];
        return [{ action: `s3:${req.method}Bucket`, resource: `arn:aws:s3:::${bucket}`, context: {} }];
      }
      const action = { GET: 'GetObject', HEAD: 'GetObject', PUT: 'PutObject', DELETE: 'DeleteObject' }[
        req.method ?? ''
      ];
      return [
        { action: `s3:${action ?? req.method}`, resource: `arn:aws:s3:::${bucket}/${key}`, context: {} },
      ];
    },
    after(req, _body, status) {
      const { bucket, key } = parse(req);
      if (key && (req.method === 'GET' || req.method === 'HEAD') && status === 404)
        return [
          {
            action: 's3:ListBucket',
            resource: `arn:aws:s3:::${bucket}`,
            context: { 's3:prefix': key },
            via: `s3:GetObject of the missing ${key}`,
          },
        ];
      return [];
    },
    // A bucket's lifecycle rules, which s3rver lacks, are taken and kept here.
    answer(req, body) {
      const { url, bucket, key } = parse(req);
      if (key || !url.searchParams.has('lifecycle') || req.method !== 'PUT') return undefined;
      lifecycleRules.set(bucket, body);
      return { status: 200, headers: { 'x-amz-request-id': randomUUID() }, body: '' };
    },
    // s3rver knows one access key; it does not check SigV4 signatures.
    forwardPath: (path) => path.replace(/([?&]X-Amz-Credential=)[^%&/]+/, '$1S3RVER'),
    forwardHeaders(headers) {
      // A presigned URL has no Authorization header, and S3 refuses one given beside its query.
      if (headers.authorization === undefined) return headers;
      return {
        ...headers,
        authorization: headers.authorization.replace(/Credential=[^/]+\//, 'Credential=S3RVER/'),
      };
    },
  };
}

/** The lifecycle configuration (XML) put on each bucket. */
export const lifecycleRules = new Map<string, string>();

/**
 * API Gateway's account settings (REST: GET and PATCH /account), answered here: the release that
 * clears the CloudWatch Logs role when the stack goes, if it still names the stack's role. Setting a
 * role passes it to API Gateway.
 */
export function apigatewayService(place: Place): Service {
  const account = `arn:aws:apigateway:${place.region}::/account`;
  const patches = (body: string) =>
    ((json(body).patchOperations as Array<{ path?: string; value?: string }> | undefined) ?? []).filter(
      (op) => op.path === '/cloudwatchRoleArn',
    );
  return {
    name: 'apigateway',
    calls(req, body) {
      const calls: Array<Omit<AwsCall, 'caller'>> = [
        { action: `apigateway:${req.method}`, resource: account, context: {} },
      ];
      if (req.method === 'PATCH')
        for (const op of patches(body))
          if (op.value)
            calls.push({
              action: 'iam:PassRole',
              resource: op.value,
              context: { 'iam:PassedToService': 'apigateway.amazonaws.com' },
              via: 'apigateway:UpdateAccount',
            });
      return calls;
    },
    answer(req, body) {
      if (!(req.url ?? '').startsWith('/account')) return undefined;
      if (req.method === 'PATCH') for (const op of patches(body)) apiGatewaySettings.push(op.value ?? '');
      return {
        status: 200,
        headers: { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID() },
        body: JSON.stringify({ cloudwatchRoleArn: apiGatewaySettings.at(-1) ?? '' }),
      };
    },
  };
}

/** The CloudWatch Logs role of API Gateway's account settings, as each PATCH (or a test, as another team would) left it. */
export const apiGatewaySettings: string[] = [];

/** A SecureString as the rehearsal's SSM holds it. */
export interface Parameter {
  readonly value: string;
  /** The KMS key that encrypts it. */
  readonly keyArn: string;
}

/**
 * SSM's GetParameter (JSON 1.1), answered here: no emulator fits, and this is all the functions
 * use. Decrypting a SecureString is a KMS call SSM makes as the caller, via SSM, with the
 * parameter's ARN as encryption context.
 */
export function ssmService(place: Place, parameters: ReadonlyMap<string, Parameter>): Service {
  const arnOf = (name: string) =>
    `arn:aws:ssm:${place.region}:${place.account}:parameter/${name.replace(/^\//, '')}`;
  return {
    name: 'ssm',
    calls(req, body) {
      const operation = target(req).split('.')[1] ?? 'Unknown';
      const input = json(body);
      const name = String(input.Name ?? '');
      const calls: Array<Omit<AwsCall, 'caller'>> = [
        { action: `ssm:${operation}`, resource: arnOf(name), context: {} },
      ];
      const parameter = parameters.get(name);
      if (operation === 'GetParameter' && input.WithDecryption && parameter)
        calls.push({
          action: 'kms:Decrypt',
          resource: parameter.keyArn,
          context: {
            'kms:ViaService': `ssm.${place.region}.amazonaws.com`,
            'kms:EncryptionContext:PARAMETER_ARN': arnOf(name),
            'kms:CallerAccount': place.account,
          },
          via: `ssm:GetParameter ${name}`,
        });
      return calls;
    },
    answer(req, body) {
      const operation = target(req).split('.')[1];
      const input = json(body);
      const headers = { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() };
      const name = String(input.Name ?? '');
      const parameter = parameters.get(name);
      if (operation !== 'GetParameter')
        return {
          status: 400,
          headers,
          body: JSON.stringify({ __type: 'InvalidAction', message: `${operation} is not faked` }),
        };
      if (!parameter)
        return {
          status: 400,
          headers,
          body: JSON.stringify({ __type: 'ParameterNotFound', message: `${name} not found` }),
        };
      return {
        status: 200,
        headers,
        body: JSON.stringify({
          Parameter: {
            Name: name,
            Type: 'SecureString',
            Value: input.WithDecryption ? parameter.value : 'AQICAH…encrypted',
            Version: 1,
            ARN: arnOf(name),
            DataType: 'text',
            LastModifiedDate: Date.now() / 1000,
          },
        }),
      };
    },
  };
}

/** CloudWatch's PutMetricData (JSON 1.0), answered here; the namespace is the call's condition key. */
export function cloudwatchService(): Service {
  return {
    name: 'monitoring',
    calls(req, body) {
      const operation = target(req).split('.')[1] ?? 'Unknown';
      const input = json(body);
      return [
        {
          action: `cloudwatch:${operation}`,
          resource: '*',
          context: input.Namespace
            ? { 'cloudwatch:namespace': String(input.Namespace) }
            : ({} as Record<string, string>),
        },
      ];
    },
    answer(req, body) {
      const operation = target(req).split('.')[1];
      if (operation === 'PutMetricData') metricData.push(json(body));
      return {
        status: operation === 'PutMetricData' ? 200 : 400,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
        body:
          operation === 'PutMetricData'
            ? '{}'
            : JSON.stringify({ __type: 'InvalidAction', message: `${operation}` }),
      };
    },
  };
}

/** Metric data put through the rehearsal's CloudWatch. */
export const metricData: Array<Record<string, unknown>> = [];

/**
 * EventBridge Scheduler (REST: CreateSchedule is POST /schedules/{Name}, UpdateSchedule PUT),
 * answered here: no emulator has it. A schedule with a target role passes that role to Scheduler.
 * The schedules made are kept, so a test can play Scheduler running them.
 */
export function schedulerService(place: Place): Service {
  const parse = (req: IncomingMessage, body: string) => {
    const url = new URL(req.url ?? '/', 'http://scheduler');
    const name = decodeURIComponent(url.pathname.split('/').at(-1) ?? '');
    const operation = { POST: 'CreateSchedule', PUT: 'UpdateSchedule', DELETE: 'DeleteSchedule' }[
      req.method ?? ''
    ];
    return { name, operation: operation ?? `${req.method}Schedule`, input: json(body) };
  };
  return {
    name: 'scheduler',
    calls(req, body) {
      const { name, operation, input } = parse(req, body);
      const group = String(input.GroupName ?? url(req).searchParams.get('groupName') ?? 'default');
      const calls: Array<Omit<AwsCall, 'caller'>> = [
        {
          action: `scheduler:${operation}`,
          resource: `arn:aws:scheduler:${place.region}:${place.account}:schedule/${group}/${name}`,
          context: {},
        },
      ];
      const role = (input.Target as { RoleArn?: string } | undefined)?.RoleArn;
      if (role)
        calls.push({
          action: 'iam:PassRole',
          resource: role,
          context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
          via: `scheduler:${operation}`,
        });
      return calls;
    },
    answer(req, body) {
      const { name, input } = parse(req, body);
      schedules.push({ Name: name, ...input });
      return {
        status: 200,
        headers: { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID() },
        body: JSON.stringify({
          ScheduleArn: `arn:aws:scheduler:${place.region}:${place.account}:schedule/${String(input.GroupName)}/${name}`,
        }),
      };
    },
  };
}

const url = (req: IncomingMessage) => new URL(req.url ?? '/', 'http://scheduler');

/** The schedules the functions made through the rehearsal's Scheduler, as their requests gave them. */
export const schedules: Array<Record<string, unknown>> = [];
