/**
 * Synthesizes the CDK app once per configuration, in one process, for scripts/cfn-lint.sh: each line of stdin is a
 * name and the `--context key=value` arguments `cdk synth` would take, and the templates go to `<outdir>/<name>/`.
 * The app is built as `cdk synth` builds it (bin/payment-api.ts's createApp, cdk.json's context under the line's),
 * without bundling: a template names its code by an asset hash either way, and the bundles are tested from the real
 * `cdk synth`'s cdk.out in test/integration/artifact. Like the CLI, any error annotation (an unacknowledged cdk-nag
 * finding) or a context problem fails the run with one line each.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ContextError } from '../bin/context';
import { createApp } from '../bin/payment-api';

const ROOT = join(__dirname, '..');

/** The context the CLI gives every synth: cdk.json's, then cdk.context.json's cached lookups. */
function projectContext(): Record<string, unknown> {
  const read = (file: string): Record<string, unknown> =>
    existsSync(join(ROOT, file))
      ? ((JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { context?: Record<string, unknown> })
          .context ?? {})
      : {};
  const cached = existsSync(join(ROOT, 'cdk.context.json'))
    ? (JSON.parse(readFileSync(join(ROOT, 'cdk.context.json'), 'utf8')) as Record<string, unknown>)
    : {};
  return { ...read('cdk.json'), ...cached };
}

/** `--context key=value ...` as the CLI reads it: every value a string. */
function contextOf(args: readonly string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (let index = 0; index < args.length; index += 2) {
    const pair = args[index + 1] ?? '';
    const separator = pair.indexOf('=');
    if (args[index] !== '--context' || separator < 1) {
      throw new Error(`expected --context key=value, got ${args.slice(index, index + 2).join(' ')}`);
    }
    context[pair.slice(0, separator)] = pair.slice(separator + 1);
  }
  return context;
}

function synthesize(outdir: string, line: string): string[] {
  const [name = '', ...args] = line.trim().split(/\s+/);
  const app = new App({
    outdir: join(outdir, name),
    context: { ...projectContext(), ...contextOf(args), 'aws:cdk:bundling-stacks': [] },
    // cfn-lint reads every template next; the built-in validation would only report.
    builtinCloudFormationValidation: false,
  });
  try {
    createApp(app);
  } catch (error) {
    if (error instanceof ContextError) return error.problems.map((problem) => `${name}: error: ${problem}`);
    throw error;
  }
  const assembly = app.synth();
  return assembly.stacksRecursively.flatMap((stack) =>
    stack.messages
      .filter(({ level }: { level: string }) => level === 'error')
      .map((message) => `${name}: ${message.id}: ${JSON.stringify(message.entry.data)}`),
  );
}

function main(): void {
  const [outdir] = process.argv.slice(2);
  if (outdir === undefined) {
    console.error('usage: tsx scripts/synth-configurations.ts <outdir> < configurations');
    process.exit(2);
  }
  const lines = readFileSync(0, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const errors = lines.flatMap((line) => synthesize(outdir, line));
  for (const error of errors) console.error(error);
  process.exit(errors.length === 0 ? 0 : 1);
}

main();
