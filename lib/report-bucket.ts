import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { LATEST_REPORT_KEY, REPORT_ENV } from '../functions/core/report-store';

const HISTORY_PREFIX = 'reports/';

export interface ReportBucketProps {
  /** Days each report is kept under `reports/`; `latest.json` is overwritten by every scan. @default 30 */
  readonly keepDays?: number;
}

/**
 * The latest full report, where the report page and the calendar feed read it: private (all public
 * access blocked), encrypted, TLS-only, old reports expired by a lifecycle rule. The construct owns
 * its wiring: each grant also sets the variable that names the bucket.
 */
export class ReportBucket extends Construct {
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: ReportBucketProps = {}) {
    super(scope, id);
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
        'is blocked and every request is logged by CloudTrail management events. Server access logs would need a second ' +
        'bucket that logs nothing anyone reads.',
    });
  }

  /** Lets the scan keep its reports here (PutObject on latest.json and reports/ only) and sets the variable naming the bucket. */
  grantWrite(fn: lambda.Function): void {
    fn.addEnvironment(REPORT_ENV.bucket, this.bucket.bucketName);
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['s3:PutObject'],
      resourceArns: [
        this.bucket.arnForObjects(LATEST_REPORT_KEY),
        this.bucket.arnForObjects(`${HISTORY_PREFIX}*`),
      ],
    });
    Validations.of(fn.role as iam.Role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/${HISTORY_PREFIX}*]`,
      reason:
        'The scan writes one new object per report under reports/ (the key is the report time); it may put objects there and nowhere else but latest.json.',
    });
  }

  /**
   * Lets the web function read latest.json and nothing else, and sets the variable naming the
   * bucket. Listing is allowed for that one key only, so a missing report is NoSuchKey (there is
   * none yet) rather than AccessDenied.
   */
  grantReadLatest(fn: lambda.Function): void {
    fn.addEnvironment(REPORT_ENV.bucket, this.bucket.bucketName);
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['s3:GetObject'],
      resourceArns: [this.bucket.arnForObjects(LATEST_REPORT_KEY)],
    });
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringEquals: { 's3:prefix': LATEST_REPORT_KEY } },
      }),
    );
  }
}
