/**
 * Typed parsers of context values. `-c key=value` gives strings and cdk.json gives JSON values, so each parser
 * takes either. A bad value throws InvalidValue with the end of a sentence ("must be …, got …") that the caller
 * starts with the context key the user typed.
 */
import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  describeMismatch,
  describeOneOf,
  describeOpenInterval,
  describePositiveNumber,
  describeValue,
  describeWholeNumber,
  isInOpenInterval,
  isPositiveNumber,
  isWholeNumberIn,
  mustBe,
  type NumberProblem,
  type OpenInterval,
  type TextFormat,
  type WholeNumberRange,
} from '../lib/validation';

export type Parser<T> = (raw: unknown) => T;

/** A context value that cannot be used; the message completes `context "<key>" …`. */
export class InvalidValue extends Error {
  override readonly name = 'InvalidValue';
}

/** Any string but the empty one (an empty value means "not set" and never reaches a parser). */
export const text: Parser<string> = (raw) => {
  if (typeof raw !== 'string') throw new InvalidValue(mustBe('a string', raw));
  return raw;
};

/** A string of the format a construct checks, with the construct's words for it. */
export function matching(format: TextFormat | ((value: string) => TextFormat)): Parser<string> {
  return (raw) => {
    const value = text(raw);
    const expected = typeof format === 'function' ? format(value) : format;
    if (!expected.pattern.test(value)) throw new InvalidValue(describeMismatch(expected, value));
    return value;
  };
}

/**
 * A string checked by a rule of its own, in that rule's words, without repeating the value: what a URL may hold
 * (credentials, a token in its query) does not belong in a build log.
 */
export function checkedText(problemOf: (value: string) => string | undefined): Parser<string> {
  return (raw) => {
    const value = text(raw);
    const problem = problemOf(value);
    if (problem !== undefined) throw new InvalidValue(problem);
    return value;
  };
}

/** A number as cdk.json gives it, or the digits of one as `-c` does; NaN for anything else. */
function numberOf(raw: unknown, digits: RegExp): number {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'string' && digits.test(raw)) return Number(raw);
  return NaN;
}

const WHOLE_DIGITS = /^\d{1,15}$/;
const DECIMAL_DIGITS = /^\d{1,15}(\.\d+)?$/;

export function wholeNumber(range: WholeNumberRange): Parser<number> {
  return (raw) => {
    const value = numberOf(raw, WHOLE_DIGITS);
    if (!(Number.isSafeInteger(value) && isWholeNumberIn(range, value))) {
      throw new InvalidValue(mustBe(describeWholeNumber(range), raw));
    }
    return value;
  };
}

/** A number above zero, e.g. a rate in `unit`. */
export function positiveNumber(unit?: string): Parser<number> {
  return (raw) => {
    const value = numberOf(raw, DECIMAL_DIGITS);
    if (!isPositiveNumber(value)) throw new InvalidValue(mustBe(describePositiveNumber(unit), raw));
    return value;
  };
}

/** A number checked by a rule of its own (see requireNoProblem), in that rule's words. */
export function checkedNumber(problemOf: NumberProblem): Parser<number> {
  return (raw) => {
    const value = numberOf(raw, DECIMAL_DIGITS);
    const problem = problemOf(value);
    if (problem !== undefined) throw new InvalidValue(`${problem}, got ${describeValue(raw)}`);
    return value;
  };
}

export function seconds(range: Omit<WholeNumberRange, 'unit'>): Parser<Duration> {
  const parse = wholeNumber({ ...range, unit: 'seconds' });
  return (raw) => Duration.seconds(parse(raw));
}

export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return (raw) => {
    const value = values.find((candidate) => candidate === raw);
    if (value === undefined) throw new InvalidValue(mustBe(describeOneOf(values), raw));
    return value;
  };
}

/** A short word checked by a rule of its own, in that rule's words (`must …`), the value shown: e.g. the key prefix. */
export function checkedWord(problemOf: (value: string) => string | undefined): Parser<string> {
  return (raw) => {
    const value = text(raw);
    const problem = problemOf(value);
    if (problem !== undefined) throw new InvalidValue(`${problem}, got ${describeValue(value)}`);
    return value;
  };
}

export const boolean: Parser<boolean> = (raw) => {
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new InvalidValue(mustBe('true or false', raw));
};

/** A number above `above` and below `below`, neither included: e.g. a share of requests in percent. */
export function numberBetween(interval: OpenInterval): Parser<number> {
  return (raw) => {
    const value = numberOf(raw, DECIMAL_DIGITS);
    if (!isInOpenInterval(interval, value))
      throw new InvalidValue(mustBe(describeOpenInterval(interval), raw));
    return value;
  };
}

const RETENTION_BY_DAYS: ReadonlyMap<number, RetentionDays> = new Map(
  Object.values(RetentionDays)
    .filter((value): value is RetentionDays => typeof value === 'number')
    .map((retention): [number, RetentionDays] => [retention, retention]),
);

/** A retention CloudWatch Logs offers, in days. */
export const retentionDays: Parser<RetentionDays> = (raw) => {
  const days = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : raw;
  const retention = typeof days === 'number' ? RETENTION_BY_DAYS.get(days) : undefined;
  if (retention === undefined) {
    throw new InvalidValue(mustBe(`one of ${[...RETENTION_BY_DAYS.keys()].join(', ')} (days)`, raw));
  }
  return retention;
};

/**
 * Names of one format, comma-separated (`-c envs=staging,production`) or a JSON array (cdk.json); each at most once,
 * in the order given.
 */
export function listOf(format: TextFormat): Parser<readonly string[]> {
  const expected = `a comma-separated list of ${format.description}, each once`;
  return (raw) => {
    const items =
      typeof raw === 'string' ? raw.split(',').map((item) => item.trim()) : Array.isArray(raw) ? raw : [];
    const valid =
      items.length > 0 &&
      items.every((item): item is string => typeof item === 'string' && format.pattern.test(item)) &&
      new Set(items).size === items.length;
    if (!valid) throw new InvalidValue(mustBe(expected, raw));
    return items;
  };
}
