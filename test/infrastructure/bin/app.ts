/** The CDK app as `cdk synth` builds it from its context (bin/payment-api.ts), without bundling. */
import { Stack } from 'aws-cdk-lib';
import { ContextError, readContext } from '../../../bin/context';
import { createApp } from '../../../bin/payment-api';
import { unbundledApp } from '../../support/construct-template';

const appStacks = new Map<string, Stack>();

/**
 * The app's stack for this context (the payment stack unless named), AwsSolutionsChecks included: built once per
 * context in a test file and shared by the tests that only read it.
 */
export function sharedAppStack(context: Record<string, unknown> = {}, stackName?: string): Stack {
  const name = stackName ?? readContext(context).stackName;
  const key = JSON.stringify([context, name]);
  let stack = appStacks.get(key);
  if (stack === undefined) {
    stack = Stack.of(createApp(unbundledApp(context)).node.findChild(name));
    appStacks.set(key, stack);
  }
  return stack;
}

/** The problems a context gets, one line each, from what `build` reads it with; [] when it accepts the context. */
export function contextProblems(build: () => unknown): readonly string[] {
  try {
    build();
    return [];
  } catch (error) {
    if (error instanceof ContextError) return error.problems;
    throw error;
  }
}
