import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';

/**
 * Lets `grantee` publish to a topic encrypted with `key`: SNS generates the message's data key and
 * decrypts with it as the publisher, so the role needs both on the key, and only on SNS's behalf
 * (`kms:ViaService`): the role's credentials alone, used anywhere else, decrypt nothing with it.
 */
export function grantTopicKey(grantee: iam.IGrantable, key: kms.IKey): void {
  iam.Grant.addToPrincipal({
    grantee,
    actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
    resourceArns: [key.keyArn],
    conditions: { StringEquals: { 'kms:ViaService': `sns.${Stack.of(key).region}.amazonaws.com` } },
  });
}
