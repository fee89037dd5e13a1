/**
 * The CDK app, and the only place that reads context: `npx cdk deploy -c env=staging -c keyCacheTtlSeconds=30`,
 * or the "context" object of cdk.json, whose "environments" entries hold settings per environment
 * (bin/environments.ts). bin/context.ts lists the keys. A context problem (an unknown key, a bad
 * value) prints one line each on stderr, `error: context "…" …`, and exits 1 without a stack trace.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PaymentApiStack } from '../lib/payment-api-stack';
import { ContextError, readContext, type AppConfig } from './context';
import { applyEnvironment } from './environments';

/** Adds the stack the configuration describes: `PaymentApi`, or `PaymentApi-<env>`. */
export function addPaymentApiStack(app: App, config: AppConfig): PaymentApiStack {
  const environment = config.env === undefined ? '' : ` (${config.env})`;
  return new PaymentApiStack(app, config.stackName, {
    ...config.props,
    description: `payment-api${environment}: API Gateway and a Lambda that checks App-id/App-key against Secrets Manager`,
  });
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null;
}

/** The app as `cdk synth` builds it; throws a ContextError when the context has problems. */
export function createApp(app: App = new App()): App {
  // Every key, not only the known ones: a misspelt key must fail rather than be ignored.
  const context: unknown = app.node.getAllContext();
  const { context: settings, fromEntry } = applyEnvironment(isRecord(context) ? context : {});
  addPaymentApiStack(app, readContext(settings, fromEntry));
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  return app;
}

function main(): void {
  try {
    createApp();
  } catch (error) {
    if (!(error instanceof ContextError)) throw error;
    for (const problem of error.problems) console.error(`error: ${problem}`);
    // Now, before the App's own exit hook could synthesize what was built so far.
    process.exit(1);
  }
}

// Run by the CDK CLI (cdk.json: npx tsx bin/payment-api.ts); importing the module has no effect.
if (require.main === module) main();
