/**
 * A CloudFormation template as a deploy would make it real, for the deploy rehearsal: every
 * resource gets the physical id and attributes it would have (names chosen here, ARNs in the
 * rehearsal's account and region), and `Ref`, `Fn::GetAtt`, `Fn::Join`… resolve to them. A
 * reference the resolver does not know fails loudly, naming it, so the rehearsal cannot silently
 * run a function with half its configuration.
 */

export interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
  readonly DependsOn?: string | string[];
}

export interface Template {
  readonly Resources: Record<string, Resource>;
}

export interface Environment {
  readonly account: string;
  readonly region: string;
  readonly stackName: string;
}

/** What one resource is once deployed: its `Ref` and its attributes. */
export interface Physical {
  readonly ref: string;
  readonly attributes: Record<string, string>;
}

export class TemplateResolver {
  private readonly physical = new Map<string, Physical>();

  constructor(
    readonly template: Template,
    readonly env: Environment,
    /** A nested stack's parameters, as its parent passes them. */
    readonly parameters: Readonly<Record<string, string>> = {},
  ) {
    for (const [id, resource] of Object.entries(template.Resources))
      this.physical.set(id, this.physicalOf(id, resource));
  }

  /** The resource with this logical id, or an error naming it. */
  resource(id: string): Resource {
    const resource = this.template.Resources[id];
    if (!resource) throw new Error(`the template has no resource ${id}`);
    return resource;
  }

  /** Logical ids of every resource of a type. */
  ofType(type: string): string[] {
    return Object.entries(this.template.Resources)
      .filter(([, r]) => r.Type === type)
      .map(([id]) => id);
  }

  ref(id: string): string {
    const found = this.physical.get(id);
    if (!found) throw new Error(`Ref to ${id}, which the template does not have`);
    return found.ref;
  }

  attribute(id: string, name: string): string {
    const value = this.physical.get(id)?.attributes[name];
    if (value === undefined)
      throw new Error(
        `Fn::GetAtt ${id}.${name}: the rehearsal does not know this attribute of ${this.resource(id).Type}`,
      );
    return value;
  }

  /** A template value with every intrinsic function resolved. */
  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    const [key, arg] = entries[0] ?? [];
    if (entries.length === 1 && key !== undefined) {
      if (key === 'Ref')
        return this.pseudo(String(arg)) ?? this.parameters[String(arg)] ?? this.ref(String(arg));
      if (key === 'Fn::GetAtt') {
        const [id, name] = Array.isArray(arg) ? arg : String(arg).split('.');
        return this.attribute(String(id), String(name));
      }
      if (key === 'Fn::Join') {
        const [separator, parts] = arg as [string, unknown[]];
        return (this.resolve(parts) as unknown[]).map(String).join(separator);
      }
      if (key === 'Fn::Select') {
        const [index, list] = arg as [number, unknown];
        return (this.resolve(list) as unknown[])[Number(index)];
      }
      if (key === 'Fn::Split') {
        const [separator, text] = arg as [string, unknown];
        return String(this.resolve(text)).split(separator);
      }
      if (key.startsWith('Fn::'))
        throw new Error(`the rehearsal cannot resolve ${key} (${JSON.stringify(arg)})`);
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, this.resolve(v)]));
  }

  /** A resolved string, or an error naming what it was. */
  string(value: unknown, what: string): string {
    const resolved = this.resolve(value);
    if (typeof resolved !== 'string') throw new Error(`${what} is not a string: ${JSON.stringify(resolved)}`);
    return resolved;
  }

  private pseudo(name: string): string | undefined {
    const { account, region, stackName } = this.env;
    return {
      'AWS::AccountId': account,
      'AWS::Region': region,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': stackName,
      'AWS::StackId': `arn:aws:cloudformation:${region}:${account}:stack/${stackName}/rehearsal`,
    }[name];
  }

  /** The physical id and attributes CloudFormation would give the resource, as names the rehearsal controls. */
  private physicalOf(id: string, resource: Resource): Physical {
    const { account, region, stackName } = this.env;
    const props = resource.Properties ?? {};
    const arn = (service: string, rest: string) => `arn:aws:${service}:${region}:${account}:${rest}`;
    // CloudFormation's generated names: stack, logical id, a suffix; kept lower case where S3 needs it.
    const generated = `${stackName}-${id}`.slice(0, 60);
    switch (resource.Type) {
      case 'AWS::SNS::Topic': {
        const name = typeof props.TopicName === 'string' ? props.TopicName : generated;
        return { ref: arn('sns', name), attributes: { TopicName: name, TopicArn: arn('sns', name) } };
      }
      case 'AWS::SQS::Queue': {
        const name = generated;
        return {
          ref: `https://sqs.${region}.amazonaws.com/${account}/${name}`,
          attributes: {
            Arn: arn('sqs', name),
            QueueName: name,
            QueueUrl: `https://sqs.${region}.amazonaws.com/${account}/${name}`,
          },
        };
      }
      case 'AWS::DynamoDB::Table': {
        const name = typeof props.TableName === 'string' ? props.TableName : generated;
        return { ref: name, attributes: { Arn: arn('dynamodb', `table/${name}`) } };
      }
      case 'AWS::S3::Bucket': {
        const name = generated.toLowerCase();
        return {
          ref: name,
          attributes: {
            Arn: `arn:aws:s3:::${name}`,
            DomainName: `${name}.s3.amazonaws.com`,
            RegionalDomainName: `${name}.s3.${region}.amazonaws.com`,
          },
        };
      }
      case 'AWS::KMS::Key': {
        const keyId = `00000000-0000-4000-8000-${String(hash(id)).padStart(12, '0').slice(-12)}`;
        return { ref: keyId, attributes: { Arn: arn('kms', `key/${keyId}`), KeyId: keyId } };
      }
      case 'AWS::IAM::Role': {
        const name = typeof props.RoleName === 'string' ? props.RoleName : generated;
        return {
          ref: name,
          attributes: {
            Arn: `arn:aws:iam::${account}:role/${name}`,
            RoleId: `AROA${id.toUpperCase().slice(0, 16)}`,
          },
        };
      }
      case 'AWS::Lambda::Function': {
        const name = typeof props.FunctionName === 'string' ? props.FunctionName : generated;
        return { ref: name, attributes: { Arn: arn('lambda', `function:${name}`) } };
      }
      case 'AWS::Logs::LogGroup': {
        // A name the template computes from other resources is resolved when asked for.
        const name =
          typeof props.LogGroupName === 'string' ? props.LogGroupName : `/aws/rehearsal/${generated}`;
        return { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
      }
      case 'AWS::ApiGateway::RestApi': {
        const apiId = `api${hash(id).toString(36)}`.slice(0, 10);
        return { ref: apiId, attributes: { RootResourceId: `${apiId}-root`, RestApiId: apiId } };
      }
      case 'AWS::ApiGateway::Resource':
        return { ref: `${id}-resource`, attributes: { ResourceId: `${id}-resource` } };
      case 'AWS::ApiGateway::Stage':
        return { ref: String(props.StageName ?? 'prod'), attributes: {} };
      case 'AWS::Scheduler::ScheduleGroup': {
        const name = typeof props.Name === 'string' ? props.Name : generated;
        return { ref: name, attributes: { Arn: arn('scheduler', `schedule-group/${name}`) } };
      }
      case 'AWS::StepFunctions::StateMachine': {
        const name = typeof props.StateMachineName === 'string' ? props.StateMachineName : generated;
        const stateMachineArn = arn('states', `stateMachine:${name}`);
        return { ref: stateMachineArn, attributes: { Arn: stateMachineArn, Name: name } };
      }
      case 'AWS::Events::Rule': {
        // EventBridge's generated names are the stack's, the logical id's and a suffix, as here.
        const name = typeof props.Name === 'string' ? props.Name : generated;
        return { ref: name, attributes: { Arn: arn('events', `rule/${name}`) } };
      }
      case 'AWS::CloudWatch::Alarm': {
        const name = typeof props.AlarmName === 'string' ? props.AlarmName : generated;
        return { ref: name, attributes: { Arn: arn('cloudwatch', `alarm:${name}`) } };
      }
      default:
        return { ref: `${generated}-physical`, attributes: {} };
    }
  }
}

function hash(text: string): number {
  let h = 7;
  for (const c of text) h = (h * 31 + c.charCodeAt(0)) % 2_147_483_647;
  return h;
}

/** One route of the template's REST API: method, resource path (`/restore/{domain}`), the function behind it. */
export interface Route {
  readonly method: string;
  readonly resourcePath: string;
  readonly functionId: string;
  readonly requiredPathParameters: readonly string[];
}

/** Every method of every REST API in the template, with the function its proxy integration invokes. */
export function routesOf(resolver: TemplateResolver): Route[] {
  const paths = new Map<string, string>();
  const pathOf = (resourceId: unknown): string => {
    const ref = (resourceId as { Ref?: string }).Ref;
    if (!ref) return ''; // the API's root resource (Fn::GetAtt RootResourceId)
    const known = paths.get(ref);
    if (known !== undefined) return known;
    const props = resolver.resource(ref).Properties ?? {};
    const path = `${pathOf(props.ParentId)}/${props.PathPart}`;
    paths.set(ref, path);
    return path;
  };
  return resolver.ofType('AWS::ApiGateway::Method').map((id) => {
    const props = resolver.resource(id).Properties ?? {};
    const uri = JSON.stringify((props.Integration as { Uri?: unknown } | undefined)?.Uri ?? '');
    const functionId = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(uri)?.[1];
    if (!functionId) throw new Error(`${id}: the rehearsal knows only Lambda proxy integrations`);
    const required = Object.entries((props.RequestParameters as Record<string, boolean> | undefined) ?? {})
      .filter(([, isRequired]) => isRequired)
      .map(([name]) => name.replace('method.request.path.', ''));
    return {
      method: String(props.HttpMethod),
      resourcePath: pathOf(props.ResourceId) || '/',
      functionId,
      requiredPathParameters: required,
    };
  });
}

/** A policy document as IAM evaluates it. */
export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: ReadonlyArray<Record<string, unknown>>;
}

/** Every identity policy of a role: its inline policies and each AWS::IAM::Policy or ManagedPolicy attached to it, resolved. */
export function rolePolicies(
  resolver: TemplateResolver,
  roleId: string,
): Array<{ name: string; policy: PolicyDocument }> {
  const role = resolver.resource(roleId).Properties ?? {};
  if (((role.ManagedPolicyArns as unknown[] | undefined) ?? []).length > 0 && !KNOWN_MANAGED(resolver, role))
    throw new Error(`${roleId} has managed policies the rehearsal cannot evaluate`);
  const inline = (
    (role.Policies as Array<{ PolicyName: string; PolicyDocument: unknown }> | undefined) ?? []
  ).map((p) => ({ name: p.PolicyName, policy: resolver.resolve(p.PolicyDocument) as PolicyDocument }));
  // Inline policies, and customer managed policies made for the role (CDK's overflow, the accounts' keys).
  const attached = [...resolver.ofType('AWS::IAM::Policy'), ...resolver.ofType('AWS::IAM::ManagedPolicy')]
    .filter((id) =>
      ((resolver.resource(id).Properties?.Roles as unknown[]) ?? []).some(
        (r) => (r as { Ref?: string }).Ref === roleId,
      ),
    )
    .map((id) => ({
      name: id,
      policy: resolver.resolve(resolver.resource(id).Properties?.PolicyDocument) as PolicyDocument,
    }));
  const managed = ((role.ManagedPolicyArns as unknown[] | undefined) ?? []).map((arn) => {
    const name = String(resolver.resolve(arn)).split('/').pop() ?? '';
    return { name, policy: MANAGED_POLICIES[name] as PolicyDocument };
  });
  return [...inline, ...attached, ...managed];
}

/**
 * The AWS managed policies a role of the stack may carry, as AWS publishes them: only the one CDK
 * gives its deploy-time function (it writes its own logs).
 */
const MANAGED_POLICIES: Record<string, PolicyDocument> = {
  // API Gateway's CloudWatch Logs role, where the stack owns that account setting.
  AmazonAPIGatewayPushToCloudWatchLogs: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          'logs:CreateLogGroup',
          'logs:CreateLogStream',
          'logs:DescribeLogGroups',
          'logs:DescribeLogStreams',
          'logs:PutLogEvents',
          'logs:GetLogEvents',
          'logs:FilterLogEvents',
        ],
        Resource: '*',
      },
    ],
  },
  AWSLambdaBasicExecutionRole: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: '*',
      },
    ],
  },
};

function KNOWN_MANAGED(resolver: TemplateResolver, role: Record<string, unknown>): boolean {
  return ((role.ManagedPolicyArns as unknown[]) ?? []).every(
    (arn) => (String(resolver.resolve(arn)).split('/').pop() ?? '') in MANAGED_POLICIES,
  );
}

/** The resource policy a service applies to `arn`: a topic's, a bucket's, a queue's or a key's, from the template. */
export function resourcePolicyFor(resolver: TemplateResolver, arn: string): PolicyDocument | undefined {
  for (const id of resolver.ofType('AWS::SNS::TopicPolicy')) {
    const props = resolver.resource(id).Properties ?? {};
    if ((resolver.resolve(props.Topics) as string[]).includes(arn))
      return resolver.resolve(props.PolicyDocument) as PolicyDocument;
  }
  for (const id of resolver.ofType('AWS::S3::BucketPolicy')) {
    const props = resolver.resource(id).Properties ?? {};
    const bucket = `arn:aws:s3:::${resolver.resolve(props.Bucket)}`;
    if (arn === bucket || arn.startsWith(`${bucket}/`))
      return resolver.resolve(props.PolicyDocument) as PolicyDocument;
  }
  for (const id of resolver.ofType('AWS::SQS::QueuePolicy')) {
    const props = resolver.resource(id).Properties ?? {};
    const queues = (resolver.resolve(props.Queues) as string[]).map(
      (url) => `arn:aws:sqs:${resolver.env.region}:${resolver.env.account}:${url.split('/').pop()}`,
    );
    if (queues.includes(arn)) return resolver.resolve(props.PolicyDocument) as PolicyDocument;
  }
  // A function's policy is the sum of its AWS::Lambda::Permission resources, as Lambda renders them.
  const permissions = resolver.ofType('AWS::Lambda::Permission').filter((id) => {
    const target = String(resolver.resolve(resolver.resource(id).Properties?.FunctionName));
    return target === arn || arn.endsWith(`:function:${target}`);
  });
  if (permissions.length > 0)
    return {
      Version: '2012-10-17',
      Statement: permissions.map((id) => {
        const props = resolver.resolve(resolver.resource(id).Properties) as Record<string, string>;
        const principal = props.Principal ?? '';
        return {
          Sid: id,
          Effect: 'Allow',
          Principal: principal.endsWith('.amazonaws.com') ? { Service: principal } : { AWS: principal },
          Action: props.Action,
          Resource: arn,
          ...(props.SourceArn ? { Condition: { ArnLike: { 'AWS:SourceArn': props.SourceArn } } } : {}),
        };
      }),
    };
  for (const id of resolver.ofType('AWS::KMS::Key'))
    if (resolver.attribute(id, 'Arn') === arn)
      return resolver.resolve(resolver.resource(id).Properties?.KeyPolicy) as PolicyDocument;
  // A role's trust policy decides who may assume it.
  for (const id of resolver.ofType('AWS::IAM::Role'))
    if (resolver.attribute(id, 'Arn') === arn)
      return resolver.resolve(resolver.resource(id).Properties?.AssumeRolePolicyDocument) as PolicyDocument;
  return undefined;
}
