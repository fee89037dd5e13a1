import type { AwsJsonClientOptions } from '../../shared/aws/aws-json-client';
import { resolveTarget, type AwsJsonService } from '../../shared/aws/aws-environment';
import { resolvedRegion } from '../common/aws-settings';
import { createOperatorSecretsManagerClient } from '../common/aws-clients';
import type { Env } from '../common/tool-io';

/**
 * What the payment Lambda's small clients need, as `npm start` gives it: the region and the credentials resolved by
 * the SDK's full chain (AWS_REGION or AWS_DEFAULT_REGION, a profile, SSO, the environment...), handed in through the
 * client's seams; the endpoint by the Lambda's own rules (AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, FIPS). The
 * SDK client here only resolves: it never sends a request. The region is resolved on the first call, so a profile
 * that cannot be read is logged as that fetch's failure, as any other.
 */
export function localAwsAccess(
  env: Env,
  service: AwsJsonService,
): Pick<AwsJsonClientOptions, 'target' | 'credentials'> {
  const chain = createOperatorSecretsManagerClient(env);
  return {
    target: async () => {
      const region = await resolvedRegion(chain);
      if (region === undefined) {
        throw new Error('no AWS region: set AWS_REGION, or a region in the profile (AWS_PROFILE)');
      }
      const target = resolveTarget({ ...env, AWS_REGION: region }, service);
      if (!target.ok) throw new Error(target.problem);
      return target.value;
    },
    credentials: async () => {
      const { accessKeyId, secretAccessKey, sessionToken } = await chain.config.credentials();
      return { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) };
    },
  };
}
