import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/**
 * The package the functions are built from. esbuild resolves their imports here and CDK hashes the
 * lock file here, whatever directory `cdk` runs in: a user's own CDK app elsewhere builds the same bundles.
 */
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface SentinelFunctionProps
  extends Pick<
    NodejsFunctionProps,
    'entry' | 'environment' | 'description' | 'reservedConcurrentExecutions'
  > {
  /** @default 256 MB */
  readonly memorySize?: number;
  /** @default 30 seconds */
  readonly timeout?: Duration;
  /** @default ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default 'domain-sentinel' */
  readonly serviceName?: string;
}

/**
 * Every function of domain-sentinel: Node.js 24 on ARM (cheaper per GB-second than x86), bundled
 * locally by esbuild (no Docker), its own log group with a set retention, and a role without
 * managed policies: it may write to its own log group and do what its constructs grant, nothing else.
 */
export class SentinelFunction extends NodejsFunction {
  readonly logGroupOfFunction: logs.LogGroup;

  constructor(scope: Construct, id: string, props: SentinelFunctionProps) {
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}: its own logs plus what its constructs grant`,
    });
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(30),
      role,
      logGroup,
      projectRoot: PACKAGE_ROOT,
      depsLockFilePath: join(PACKAGE_ROOT, 'package-lock.json'),
      ...(props.reservedConcurrentExecutions !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
        : {}),
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? 'domain-sentinel',
        ...props.environment,
      },
      bundling: {
        minify: true,
        sourceMap: true,
        target: 'node24',
        format: OutputFormat.CJS,
        // The AWS SDK is bundled, not taken from the runtime: the function then runs the SDK it was
        // built and tested with (the deploy rehearsal runs these very bundles), not whatever version
        // the runtime ships that day. The SDK's ES modules let esbuild drop what is unused.
        externalModules: [],
        mainFields: ['module', 'main'],
        forceDockerBundling: false,
      },
    });
    logGroup.grantWrite(role);
    this.logGroupOfFunction = logGroup;
  }
}
