/**
 * The CDK app, and the only place that reads context: `npx cdk deploy -c env=staging -c keyCacheTtlSeconds=30`,
 * or the "context" object of cdk.json, whose "environments" entries hold settings per environment
 * (bin/environments.ts). bin/context.ts lists the keys. A context problem (an unknown key, a bad
 * value) prints one line each on stderr, `error: context "…" …`, and exits 1 without a stack trace.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PaymentApiStack } from '../lib/payment-api-stack';
import { PIPELINE_ACCESS_STACK_NAME, PipelineAccessStack } from '../lib/pipeline-access-stack';
import {
  ContextError,
  DEFAULT_PIPELINE_STAGES,
  readContext,
  stackNameFor,
  type AppConfig,
  type PipelineAccessConfig,
} from './context';
import { applyEnvironment } from './environments';

/** Adds the stack the configuration describes: `PaymentApi`, or `PaymentApi-<env>`. */
export function addPaymentApiStack(app: App, config: AppConfig): PaymentApiStack {
  const environment = config.env === undefined ? '' : ` (${config.env})`;
  return new PaymentApiStack(app, config.stackName, {
    ...config.props,
    description: `payment-api${environment}: API Gateway and a Lambda that checks App-id/App-key against Secrets Manager`,
  });
}

/** The CDK's own key for `cdk bootstrap --qualifier`; the access stack's roles use that qualifier's roles. */
const QUALIFIER_KEY = '@aws-cdk/core:bootstrapQualifier';
const GITHUB_REPOSITORY_KEY = 'githubRepository';

/**
 * Adds `PaymentApiPipelineAccess`. Only with `githubRepository`, and then alone: the app of a newcomer's
 * `npx cdk deploy` (which names no stack) still holds the one payment stack it deploys today.
 */
export function addPipelineAccessStack(
  app: App,
  config: PipelineAccessConfig & { readonly githubRepository: string },
): PipelineAccessStack {
  const qualifier: unknown = app.node.tryGetContext(QUALIFIER_KEY);
  return new PipelineAccessStack(app, PIPELINE_ACCESS_STACK_NAME, {
    description: `payment-api: what the GitHub Actions pipeline of ${config.githubRepository} may do (OIDC, no keys)`,
    githubRepository: config.githubRepository,
    repositoryIds: config.repositoryIds,
    existingOidcProviderArn: config.existingOidcProviderArn,
    stages: (config.stages ?? DEFAULT_PIPELINE_STAGES).map((environment) => ({
      environment,
      stackName: stackNameFor(environment),
    })),
    regions: config.regions,
    cdkQualifier: typeof qualifier === 'string' ? qualifier : undefined,
  });
}

type Context = Readonly<Record<string, unknown>>;

/** The configuration of each environment `envs` names, read as `-c env=<name>` would be; every problem at once. */
function configsOfEnvironments(context: Context, envs: readonly string[]): AppConfig[] {
  const { envs: _names, ...rest } = context;
  const problems: string[] = [];
  const configs: AppConfig[] = [];
  for (const env of envs) {
    try {
      const { context: settings, fromEntry } = applyEnvironment({ ...rest, env });
      configs.push(readContext(settings, fromEntry));
    } catch (error) {
      if (!(error instanceof ContextError)) throw error;
      problems.push(...error.problems.filter((problem) => !problems.includes(problem)));
    }
  }
  if (problems.length > 0) throw new ContextError(problems);
  return configs;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null;
}

/** The app as `cdk synth` builds it; throws a ContextError when the context has problems. */
export function createApp(app: App = new App()): App {
  // Every key, not only the known ones: a misspelt key must fail rather than be ignored.
  const context: unknown = app.node.getAllContext();
  const all = isRecord(context) ? context : {};
  const { context: settings, fromEntry } = applyEnvironment(all);
  const config = readContext(settings, fromEntry);
  const githubRepository = config.pipelineAccess?.githubRepository;
  if (githubRepository !== undefined) {
    // The access stack alone: deployed once, by name, without building (or bundling) a payment stack beside it.
    addPipelineAccessStack(app, { ...config.pipelineAccess, githubRepository });
  } else {
    const configs = config.envs === undefined ? [config] : configsOfEnvironments(all, config.envs);
    for (const each of configs) addPaymentApiStack(app, each);
  }
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  return app;
}

/**
 * The app `cdk` runs. With `githubRepository` it holds the access stack alone, and skips the CDK's built-in
 * template validation, which only reports and costs most of that synth's CPU (seconds); cfn-lint checks the access
 * stack's template in npm test (scripts/cfn-lint.sh). The payment stacks keep the validation.
 */
function cliApp(): App {
  // Context is read before the App is made; this one is never synthesized.
  const probe = new App({ autoSynth: false });
  const repository: unknown = probe.node.tryGetContext(GITHUB_REPOSITORY_KEY);
  const accessStackOnly = typeof repository === 'string' && repository !== '';
  return new App({ builtinCloudFormationValidation: !accessStackOnly });
}

function main(): void {
  try {
    createApp(cliApp());
  } catch (error) {
    if (!(error instanceof ContextError)) throw error;
    for (const problem of error.problems) console.error(`error: ${problem}`);
    // Now, before the App's own exit hook could synthesize what was built so far.
    process.exit(1);
  }
}

// Run by the CDK CLI (cdk.json: npx tsx bin/payment-api.ts); importing the module has no effect.
if (require.main === module) main();
