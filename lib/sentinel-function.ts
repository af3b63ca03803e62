import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import {
  type ICommandHooks,
  NodejsFunction,
  type NodejsFunctionProps,
  OutputFormat,
} from 'aws-cdk-lib/aws-lambda-nodejs';
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
  /**
   * A script in `functions/` that Lambda's runtime runs instead of node (`AWS_LAMBDA_EXEC_WRAPPER`),
   * copied executable into the bundle beside `index.js`.
   */
  readonly execWrapper?: string;
}

/**
 * Bundling hooks that copy `functions/<file>` into the bundle, executable: the CLI's zip keeps each
 * file's mode, and Lambda runs an exec wrapper only when it is executable.
 */
function copyIntoBundle(file: string): ICommandHooks {
  if (!/^[\w.-]+$/.test(file)) throw new Error(`execWrapper must be a file name in functions/, not ${file}`);
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      `cp "${inputDir}/functions/${file}" "${outputDir}/${file}"`,
      `chmod 755 "${outputDir}/${file}"`,
    ],
  };
}

/**
 * Every function of domain-sentinel: Node.js 24 on ARM (cheaper per GB-second than x86), bundled
 * locally by esbuild (no Docker), its own log group with a set retention, and a role without
 * managed policies: it may write to its own log group and do what its constructs grant, nothing else.
 */
export class SentinelFunction extends NodejsFunction {
  readonly logGroupOfFunction: logs.LogGroup;

  constructor(scope: Construct, id: string, props: SentinelFunctionProps) {
    // A zip made on Windows carries no executable bit, and Lambda refuses a wrapper without one:
    // the function would not start at all. There it runs as the runtime starts it (warned below).
    const execWrapper = process.platform === 'win32' ? undefined : props.execWrapper;
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
        ...(execWrapper ? { AWS_LAMBDA_EXEC_WRAPPER: `/var/task/${execWrapper}` } : {}),
        ...props.environment,
      },
      bundling: {
        minify: true,
        sourceMap: true,
        target: 'node24',
        format: OutputFormat.CJS,
        // The Node.js 24 runtime ships AWS SDK v3; bundling it again would only add size and cold-start time.
        externalModules: ['@aws-sdk/*'],
        forceDockerBundling: false,
        ...(execWrapper ? { commandHooks: copyIntoBundle(execWrapper) } : {}),
      },
    });
    logGroup.grantWrite(role);
    this.logGroupOfFunction = logGroup;
    if (props.execWrapper && !execWrapper)
      Annotations.of(this).addWarningV2(
        'domain-sentinel:execWrapperOnWindows',
        `${id} starts without functions/${props.execWrapper}: a bundle zipped on Windows cannot mark it executable. It runs, with more memory in use (docs/performance.md); deploy from Linux or macOS for the figures there.`,
      );
  }
}
