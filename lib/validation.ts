/**
 * The words for a valid value, shared by the constructs (which check props) and the CDK app's context table
 * (which checks context values), so a bad value gets the same sentence wherever it is caught:
 * `<name> must be <what>, got <value>`.
 */
import { Token, type Duration } from 'aws-cdk-lib';

/** The shape a text value must have, and the words that describe it. */
export interface TextFormat {
  readonly pattern: RegExp;
  /** Completes "<name> must be …", for example "a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)". */
  readonly description: string;
}

/** Whole numbers from `min` to `max` (both included), counted in `unit`. */
export interface WholeNumberRange {
  readonly min: number;
  /** @default - no upper bound */
  readonly max?: number;
  /** Said after "a whole number of", e.g. "seconds". @default - none: "a whole number" */
  readonly unit?: string;
}

/** The units a Duration is checked in. */
export type DurationUnit = 'milliseconds' | 'seconds' | 'hours' | 'days';

/** A whole number of a time unit: how a Duration prop is bounded. */
export interface DurationRange extends WholeNumberRange {
  readonly unit: DurationUnit;
}

/** Numbers above `above` and below `below`, neither included. */
export interface OpenInterval {
  readonly above: number;
  readonly below: number;
  /** What the number is, e.g. "percentage". @default 'number' */
  readonly noun?: string;
}

const MILLIS_PER: Readonly<Record<DurationUnit, number>> = {
  milliseconds: 1,
  seconds: 1000,
  hours: 3_600_000,
  days: 86_400_000,
};

/** "a whole number of seconds from 1 to 3600", "a whole number of at least 2". */
export function describeWholeNumber({ min, max, unit }: WholeNumberRange): string {
  const what = unit === undefined ? 'a whole number' : `a whole number of ${unit}`;
  return max === undefined ? `${what} of at least ${min}` : `${what} from ${min} to ${max}`;
}

/** "a positive number of requests per second". */
export function describePositiveNumber(unit?: string): string {
  return unit === undefined ? 'a positive number' : `a positive number of ${unit}`;
}

/** "a percentage greater than 0 and less than 100". */
export function describeOpenInterval({ above, below, noun = 'number' }: OpenInterval): string {
  return `a ${noun} greater than ${above} and less than ${below}`;
}

/** "one of open, closed". */
export function describeOneOf(values: readonly string[]): string {
  return `one of ${values.join(', ')}`;
}

/** A value as the message shows it: text quoted, objects and lists as JSON, numbers and the rest as they are. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `"${value}"`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined) return String(value);
  return JSON.stringify(value);
}

/** `must be <expected>, got <value>`: the end of a sentence that starts with what was wrong. */
export function mustBe(expected: string, value: unknown): string {
  return `must be ${expected}, got ${describeValue(value)}`;
}

/** `must be <description>, got "<value>"` for a text that does not have its format. */
export function describeMismatch(format: TextFormat, value: string): string {
  return mustBe(format.description, value);
}

export function isWholeNumberIn({ min, max }: WholeNumberRange, value: number): boolean {
  return Number.isInteger(value) && value >= min && value <= (max ?? Number.MAX_SAFE_INTEGER);
}

export function isPositiveNumber(value: number): boolean {
  return Number.isFinite(value) && value > 0;
}

export function isInOpenInterval({ above, below }: OpenInterval, value: number): boolean {
  return Number.isFinite(value) && value > above && value < below;
}

function fail(name: string, expected: string, value: unknown): never {
  throw new Error(`${name} ${mustBe(expected, value)}`);
}

/*
 * The checks constructs run on their props. Each throws `<name> must be …, got …` and leaves values that are
 * tokens to CloudFormation, which resolves them at deploy time.
 */

export function requireFormat(name: string, format: TextFormat, value: string): void {
  if (!Token.isUnresolved(value) && !format.pattern.test(value)) fail(name, format.description, value);
}

export function requireWholeNumber(name: string, range: WholeNumberRange, value: number): void {
  if (!Token.isUnresolved(value) && !isWholeNumberIn(range, value)) {
    fail(name, describeWholeNumber(range), value);
  }
}

/** A Duration as a whole number of `range.unit`; the message gives the value in that unit. */
export function requireWholeDuration(name: string, range: DurationRange, duration: Duration): void {
  if (duration.isUnresolved()) return;
  requireWholeNumber(name, range, duration.toMilliseconds() / MILLIS_PER[range.unit]);
}

export function requirePositiveNumber(name: string, unit: string | undefined, value: number): void {
  if (!Token.isUnresolved(value) && !isPositiveNumber(value)) fail(name, describePositiveNumber(unit), value);
}

export function requireInOpenInterval(name: string, interval: OpenInterval, value: number): void {
  if (!Token.isUnresolved(value) && !isInOpenInterval(interval, value)) {
    fail(name, describeOpenInterval(interval), value);
  }
}

/**
 * Says why a number is refused, phrased to follow its name (`must be …`), or undefined when it is valid: a rule
 * whose words live with the runtime that applies it too (the rate limits of shared/keys/rate-limit.ts).
 */
export type NumberProblem = (value: number) => string | undefined;

/** A number checked by a rule of its own, with that rule's words: `<name> must be …, got <value>`. */
export function requireNoProblem(name: string, problemOf: NumberProblem, value: number): void {
  if (Token.isUnresolved(value)) return;
  const problem = problemOf(value);
  if (problem !== undefined) throw new Error(`${name} ${problem}, got ${describeValue(value)}`);
}

export function requireOneOf<T extends string>(name: string, values: readonly T[], value: T): void {
  if (!Token.isUnresolved(value) && !values.includes(value)) fail(name, describeOneOf(values), value);
}
