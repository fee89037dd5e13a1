/** CloudFormation's rule for stack names, or a stack ARN (DescribeStacks takes both). */
const STACK_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;
const STACK_ARN_PATTERN =
  /^arn:aws[a-z-]*:cloudformation:[a-z0-9-]+:\d{12}:stack\/[A-Za-z][A-Za-z0-9-]{0,127}\/[A-Za-z0-9-]+$/;

/** Why a --stack value is refused, phrased to follow "invalid --stack: "; undefined when it is valid. Never echoes. */
export function stackNameProblem(value: string): string | undefined {
  return STACK_NAME_PATTERN.test(value) || STACK_ARN_PATTERN.test(value)
    ? undefined
    : 'a stack name is 1 to 128 letters, digits or "-", starting with a letter (or give its ARN)';
}
