/**
 * Stands in for `@aws-sdk/credential-provider-node` in the SDK-based Lambda bundles, the rotation function's and the
 * registry monitor's (an esbuild alias: lib/bundled-function.ts; the payment Lambda has no SDK).
 * Lambda hands every function its role's credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN, the first source the SDK's default chain tries, so the rest of that chain (profiles, SSO, web
 * identity, container and instance metadata, and the STS and SSO clients they bring) is never reached there;
 * leaving it out more than halves the bundle. The key CLI and the local server run from source and keep the whole
 * chain.
 */
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
