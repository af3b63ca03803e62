import { Duration, Lazy, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { LATEST_REPORT_KEY, LATEST_VIEW_KEY, REPORT_ENV } from '../functions/core/memory/report-store';
import {
  ACCOUNT_DIRECTORY_KEY,
  ACCOUNT_SUMMARY_KEY,
  type AccountDirectory,
  accountReportPrefix,
} from '../functions/core/scan/accounts';
import { sdkCall } from './sdk-call';

const HISTORY_PREFIX = 'reports/';
const ACCOUNTS_PREFIX = 'accounts/';
/** Why the web function may read every report kept under a reports/ prefix (cdk-nag's IAM5). */
const HISTORY_READ_REASON =
  'report.json answers a presigned URL of the very report its link names, kept under reports/ (the key is the report time, ' +
  'known only once the link is followed), so a scan that overwrites latest.json meanwhile cannot make it serve a newer ' +
  'report. These are the same reports latest.json held; the web function may read nothing else there.';

export interface ReportBucketProps {
  /** Days each report is kept under `reports/`; `latest.json` is overwritten by every scan. @default 30 */
  readonly keepDays?: number;
  /**
   * An existing bucket to keep the reports in: the one an earlier deployment kept when it was
   * destroyed (output ReportBucketName). The stack gives it this construct's bucket policy and
   * lifecycle rules, as it would a bucket of its own. @default - a new bucket
   */
  readonly bucketName?: string;
}

/** A lifecycle rule as both CloudFormation and S3's PutBucketLifecycleConfiguration can take it. */
interface HistoryRule {
  readonly id: string;
  readonly prefix: string;
}

/**
 * The latest full report, where the report page and the calendar feed read it: private (all public
 * access blocked), encrypted, TLS-only, old reports expired by a lifecycle rule; or the bucket an
 * earlier deployment kept, adopted by name. The construct owns its wiring: each grant also sets the
 * variable that names the bucket.
 */
export class ReportBucket extends Construct {
  readonly bucket: s3.IBucket;
  /** Whether the bucket is an earlier deployment's, adopted by name (not a resource of this stack). */
  readonly adopted: boolean;
  private readonly keepDays: number;
  private readonly historyRules: HistoryRule[] = [{ id: 'ExpireOldReports', prefix: HISTORY_PREFIX }];
  /** The adopted bucket's policy (a bucket of its own has one through enforceSSL). */
  private adoptedPolicy?: s3.BucketPolicy;
  /** The roles that may read objects: the bucket's policy refuses every other principal. */
  private readonly readers: iam.IRole[] = [];

  constructor(scope: Construct, id: string, props: ReportBucketProps = {}) {
    super(scope, id);
    this.keepDays = props.keepDays ?? 30;
    this.adopted = props.bucketName !== undefined;
    if (props.bucketName) {
      this.bucket = s3.Bucket.fromBucketName(this, 'Bucket', props.bucketName);
      this.adoptBucket();
      return;
    }
    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { id: 'ExpireOldReports', prefix: HISTORY_PREFIX, expiration: Duration.days(props.keepDays ?? 30) },
        { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      // Kept on destroy: emptying it would need a custom-resource Lambda of its own (docs/deploy.md, Tear down).
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'The bucket holds only reports the scan writes and the web function reads, through their own roles; public access ' +
        'is blocked and TLS required. CloudTrail management events record changes to the bucket itself; object reads and ' +
        'writes are S3 data events, recorded where a trail of the account selects this bucket (docs/security.md). Server ' +
        'access logs would need a second bucket, for a record a data-event trail gives already.',
    });
  }

  /**
   * An adopted bucket gets what a new one has from its resource: the TLS-only policy (its old
   * policy went with the stack that made it) and the lifecycle rules, put by a deploy-time call on
   * every deploy that changes them (CloudFormation can set neither on a bucket it did not create).
   */
  private adoptBucket(): void {
    const policy = new s3.BucketPolicy(this, 'Policy', { bucket: this.bucket });
    this.adoptedPolicy = policy;
    policy.document.addStatements(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['s3:*'],
        resources: [this.bucket.bucketArn, this.bucket.arnForObjects('*')],
        conditions: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
    const rules = Lazy.any({
      produce: () => [
        ...this.historyRules.map((rule) => ({
          ID: rule.id,
          Status: 'Enabled',
          Filter: { Prefix: rule.prefix },
          Expiration: { Days: this.keepDays },
        })),
        {
          ID: 'AbortIncompleteUploads',
          Status: 'Enabled',
          Filter: { Prefix: '' },
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        },
      ],
    });
    const call = {
      service: 'S3',
      action: 'putBucketLifecycleConfiguration',
      parameters: { Bucket: this.bucket.bucketName, LifecycleConfiguration: { Rules: rules } },
      physicalResourceId: cr.PhysicalResourceId.of(`${this.bucket.bucketName}/lifecycle`),
    };
    sdkCall(this, 'Lifecycle', {
      onCreate: call,
      onUpdate: call,
      statements: [
        new iam.PolicyStatement({
          actions: ['s3:PutLifecycleConfiguration'],
          resources: [this.bucket.bucketArn],
        }),
      ],
    });
  }

  /** Expires the reports under `prefix` after the bucket's days, on a bucket of its own or an adopted one. */
  private addHistoryRule(rule: HistoryRule): void {
    if (this.adopted) this.historyRules.push(rule);
    else
      (this.bucket as s3.Bucket).addLifecycleRule({
        id: rule.id,
        prefix: rule.prefix,
        expiration: Duration.days(this.keepDays),
      });
  }

  /**
   * Lets the scan keep its reports here (PutObject on latest.json, the view beside it that the page
   * and the feed read, and reports/ only) and sets the variable naming the bucket.
   */
  grantWrite(fn: lambda.Function): void {
    fn.addEnvironment(REPORT_ENV.bucket, this.bucket.bucketName);
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['s3:PutObject'],
      resourceArns: [
        this.bucket.arnForObjects(LATEST_REPORT_KEY),
        this.bucket.arnForObjects(LATEST_VIEW_KEY),
        this.bucket.arnForObjects(`${HISTORY_PREFIX}*`),
      ],
    });
    Validations.of(fn.role as iam.Role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${this.nagArn()}/${HISTORY_PREFIX}*]`,
      reason:
        'The scan writes one new object per report under reports/ (the key is the report time); it may put objects there and nowhere else but latest.json and latest-view.json.',
    });
  }

  /**
   * Lets the web function read latest.json, the view beside it (the page and the feed read the
   * view, a filter the report) and the reports kept under reports/ (report.json hands out a
   * presigned URL of the report its link names, which no later scan overwrites), and nothing else;
   * sets the variable naming the bucket. Listing is allowed for those keys only, so a missing report
   * is NoSuchKey (none yet, or expired) rather than AccessDenied.
   */
  grantReadLatest(fn: lambda.Function): void {
    this.allowReader(fn);
    fn.addEnvironment(REPORT_ENV.bucket, this.bucket.bucketName);
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['s3:GetObject'],
      resourceArns: [
        this.bucket.arnForObjects(LATEST_REPORT_KEY),
        this.bucket.arnForObjects(LATEST_VIEW_KEY),
        this.bucket.arnForObjects(`${HISTORY_PREFIX}*`),
      ],
    });
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: {
          StringLike: { 's3:prefix': [LATEST_REPORT_KEY, LATEST_VIEW_KEY, `${HISTORY_PREFIX}*`] },
        },
      }),
    );
    Validations.of(fn.role as iam.Role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${this.nagArn()}/${HISTORY_PREFIX}*]`,
      reason: HISTORY_READ_REASON,
    });
  }

  /**
   * Several accounts (docs/accounts.md): lets the scan keep each account's report, history and
   * summary under `accounts/<name>/`, and expires each account's history like the deployment's.
   */
  grantWriteAccounts(fn: lambda.Function, accounts: readonly string[]): void {
    fn.addEnvironment(REPORT_ENV.bucket, this.bucket.bucketName);
    const keys = [
      `${ACCOUNTS_PREFIX}*/${LATEST_REPORT_KEY}`,
      `${ACCOUNTS_PREFIX}*/${LATEST_VIEW_KEY}`,
      `${ACCOUNTS_PREFIX}*/${ACCOUNT_SUMMARY_KEY}`,
      `${ACCOUNTS_PREFIX}*/${HISTORY_PREFIX}*`,
    ];
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['s3:PutObject'],
      resourceArns: keys.map((key) => this.bucket.arnForObjects(key)),
    });
    for (const account of accounts)
      this.addHistoryRule({
        id: `ExpireOldReports-${account}`,
        prefix: `${accountReportPrefix(account)}${HISTORY_PREFIX}`,
      });
    this.acknowledgeAccountKeys(
      fn,
      keys,
      'The scan writes each account’s report, its view, summary and history under its own prefix, accounts/<name>/; it may put objects there and nowhere else but latest.json, latest-view.json and reports/.',
    );
  }

  /**
   * Lets the web function read the deployment's accounts (`accounts.json`), and each account's
   * latest report, its view, summary and the reports kept under its reports/ (report.json's
   * presigned URL, as {@link grantReadLatest}); listing only for those keys, so a missing one is
   * NoSuchKey.
   */
  grantReadAccounts(fn: lambda.Function): void {
    this.allowReader(fn);
    fn.addEnvironment(REPORT_ENV.bucket, this.bucket.bucketName);
    const keys = [
      `${ACCOUNTS_PREFIX}*/${LATEST_REPORT_KEY}`,
      `${ACCOUNTS_PREFIX}*/${LATEST_VIEW_KEY}`,
      `${ACCOUNTS_PREFIX}*/${ACCOUNT_SUMMARY_KEY}`,
      `${ACCOUNTS_PREFIX}*/${HISTORY_PREFIX}*`,
    ];
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['s3:GetObject'],
      resourceArns: [ACCOUNT_DIRECTORY_KEY, ...keys].map((key) => this.bucket.arnForObjects(key)),
    });
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [ACCOUNT_DIRECTORY_KEY, ...keys] } },
      }),
    );
    this.acknowledgeAccountKeys(
      fn,
      keys,
      'The web function reads each account’s latest report, its view, summary and kept reports under accounts/<name>/ ' +
        '(the accounts are those of accounts.json; report.json presigns the kept report its link names, which no later scan ' +
        'overwrites, where latest.json may be by the time the link is followed); it may read nothing else there.',
    );
  }

  /**
   * Lets the scan read the deployment's accounts (`accounts.json`) and nothing else of the bucket
   * beyond what it writes: it scans an account's input only when it is that account's item there.
   * No listing: a missing object is AccessDenied for it, and a deploy writes it again either way.
   */
  grantReadAccountDirectory(fn: lambda.Function): void {
    this.allowReader(fn);
    fn.addEnvironment(REPORT_ENV.bucket, this.bucket.bucketName);
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['s3:GetObject'],
      resourceArns: [this.bucket.arnForObjects(ACCOUNT_DIRECTORY_KEY)],
    });
  }

  /**
   * The deploy's own copy of the accounts, for the web function and the scan's check of its input:
   * `accounts.json`, written on every deploy. Returns the deploy-time call, for what must wait for it.
   */
  writeAccountDirectory(directory: AccountDirectory, physicalId: string): cr.AwsCustomResource {
    const call = {
      service: 'S3',
      action: 'putObject',
      parameters: {
        Bucket: this.bucket.bucketName,
        Key: ACCOUNT_DIRECTORY_KEY,
        Body: JSON.stringify(directory),
        ContentType: 'application/json; charset=utf-8',
      },
      physicalResourceId: cr.PhysicalResourceId.of(physicalId),
    };
    return sdkCall(this, 'AccountDirectory', {
      onCreate: call,
      onUpdate: call,
      statements: [
        new iam.PolicyStatement({
          actions: ['s3:PutObject'],
          resources: [this.bucket.arnForObjects(ACCOUNT_DIRECTORY_KEY)],
        }),
      ],
    });
  }

  /**
   * The reports hold every quarantined domain's signed restore link and the registrants: a reader
   * of them holds the report link's power. In an account other teams share, their roles often may
   * read every bucket (ReadOnlyAccess allows s3:Get* on *), so the bucket's own policy refuses
   * GetObject to every principal but the roles granted here; an operator reads a report through
   * its link, or changes the policy.
   */
  private allowReader(fn: lambda.Function): void {
    const role = fn.role;
    if (!role || this.readers.includes(role)) return;
    this.readers.push(role);
    if (this.readers.length > 1) return;
    const statement = new iam.PolicyStatement({
      sid: 'OnlyTheStacksFunctionsRead',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:GetObject', 's3:GetObjectVersion'],
      resources: [this.bucket.arnForObjects('*')],
      conditions: {
        ArnNotEquals: {
          'aws:PrincipalArn': Lazy.list({ produce: () => this.readers.map((r) => r.roleArn) }),
        },
      },
    });
    if (this.adoptedPolicy) this.adoptedPolicy.document.addStatements(statement);
    else this.bucket.addToResourcePolicy(statement);
  }

  private acknowledgeAccountKeys(fn: lambda.Function, keys: readonly string[], reason: string): void {
    for (const key of keys)
      Validations.of(fn.role as iam.Role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${this.nagArn()}/${key}]`,
        reason,
      });
  }

  /** The bucket's ARN as cdk-nag writes it in a finding: its own resource's, or an adopted bucket's name. */
  private nagArn(): string {
    if (this.adopted) return `arn:<AWS::Partition>:s3:::${this.bucket.bucketName}`;
    return `<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>`;
  }
}
