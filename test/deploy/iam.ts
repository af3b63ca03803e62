import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { AwsCall } from './aws-calls';
import { type PolicyDocument, resourcePolicyFor, rolePolicies, type TemplateResolver } from './template';

/**
 * IAM's verdict on the recorded calls, by @cloud-copilot/iam-simulate: a policy evaluator that
 * knows every action, resource type and condition key of AWS (from AWS's own service reference),
 * applies identity and resource policies with explicit denies, and says which statement decided.
 * The role's policies come from the template; the resource's policy (a topic's, a bucket's, a
 * key's) too, or for an AWS managed key the policy AWS gives it.
 */

export interface Denial {
  readonly call: AwsCall;
  readonly result: string;
}

/** The policy AWS gives an AWS managed key (aws/ssm): any principal of the account, through the service only. */
export function awsManagedKeyPolicy(account: string, service: string, region: string): PolicyDocument {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'Allow access through the service for all principals in the account that are authorized to use it',
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Action: ['kms:Encrypt', 'kms:Decrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:DescribeKey'],
        Resource: '*',
        Condition: {
          StringEquals: {
            'kms:CallerAccount': account,
            'kms:ViaService': `${service}.${region}.amazonaws.com`,
          },
        },
      },
      {
        Sid: 'Allow direct access to key metadata to the account',
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${account}:root` },
        Action: ['kms:Describe*', 'kms:Get*', 'kms:List*'],
        Resource: '*',
      },
    ],
  };
}

/** Who makes a call: a role of the template (a function's, the schedule's), or an AWS service. */
export type Principal =
  | {
      /** Logical id of the role in the template. */
      readonly roleId: string;
      /** The session name (the function's name). */
      readonly session: string;
    }
  | { readonly service: string };

/**
 * Evaluates each call against its caller's role. Resolves to the calls IAM would refuse, each with
 * the verdict; `extraResourcePolicies` gives policies of resources that are not in the template.
 */
export async function denials(
  resolver: TemplateResolver,
  calls: readonly AwsCall[],
  principalOf: (caller: string) => Principal,
  extraResourcePolicies: ReadonlyMap<string, PolicyDocument> = new Map(),
): Promise<Denial[]> {
  const { account } = resolver.env;
  const out: Denial[] = [];
  const seen = new Map<string, string>();
  for (const call of calls) {
    const key = JSON.stringify([call.caller, call.action, call.resource, call.context]);
    let result = seen.get(key);
    if (result === undefined) {
      const principal = principalOf(call.caller);
      const roleName = 'roleId' in principal ? resolver.ref(principal.roleId) : undefined;
      const resourcePolicy =
        resourcePolicyFor(resolver, call.resource) ?? extraResourcePolicies.get(call.resource);
      const response = await runSimulation(
        {
          identityPolicies: 'roleId' in principal ? rolePolicies(resolver, principal.roleId) : [],
          serviceControlPolicies: [],
          resourceControlPolicies: [],
          ...(resourcePolicy ? { resourcePolicy } : {}),
          request: {
            action: call.action,
            principal:
              'roleId' in principal
                ? `arn:aws:sts::${account}:assumed-role/${roleName}/${principal.session}`
                : principal.service,
            resource: { accountId: account, resource: call.resource },
            contextVariables: {
              // The SDK speaks HTTPS to AWS; the rehearsal's emulators are plain HTTP on loopback.
              'aws:SecureTransport': 'true',
              ...(roleName
                ? {
                    'aws:PrincipalAccount': account,
                    'aws:PrincipalArn': `arn:aws:iam::${account}:role/${roleName}`,
                  }
                : {}),
              ...call.context,
            },
          },
        } as never,
        {},
      );
      result =
        response.resultType === 'error'
          ? `not evaluated: ${JSON.stringify(response.errors)}`
          : String((response as { overallResult: string }).overallResult);
      seen.set(key, result);
    }
    if (result !== 'Allowed') out.push({ call, result });
  }
  return out;
}

/** A denial in words: who, what, on which resource, why it was made. */
export const describeDenial = ({ call, result }: Denial) =>
  `${call.caller} may not ${call.action} on ${call.resource}${call.via ? ` (made by AWS for ${call.via})` : ''}: ${result}`;
