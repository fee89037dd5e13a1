import { Token } from 'aws-cdk-lib';

/**
 * The shape a text prop must have, and the words that describe it. Constructs check props with it, and the CDK
 * app checks context values with the same format, so both say the same thing about a bad value.
 */
export interface TextFormat {
  readonly pattern: RegExp;
  /** Completes "<name> must be …", for example "a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)". */
  readonly description: string;
}

/** `must be <description>, got "<value>"`: the end of a sentence that starts with what was wrong. */
export function describeMismatch(format: TextFormat, value: string): string {
  return `must be ${format.description}, got "${value}"`;
}

/** Throws `<name> must be <description>, got "<value>"` unless `value` has the format. Tokens are left alone. */
export function requireFormat(name: string, format: TextFormat, value: string): void {
  if (!Token.isUnresolved(value) && !format.pattern.test(value)) {
    throw new Error(`${name} ${describeMismatch(format, value)}`);
  }
}
