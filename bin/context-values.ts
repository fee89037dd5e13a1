/**
 * Typed parsers of context values. `-c key=value` gives strings and cdk.json gives JSON values, so each parser
 * takes either. A bad value throws InvalidValue with the end of a sentence ("must be …, got …") that the caller
 * starts with the context key the user typed.
 */
import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describeMismatch, type TextFormat } from '../lib/text-format';

export type Parser<T> = (raw: unknown) => T;

/** A context value that cannot be used; the message completes `context "<key>" …`. */
export class InvalidValue extends Error {
  override readonly name = 'InvalidValue';
}

function quote(raw: unknown): string {
  return typeof raw === 'string' ? `"${raw}"` : JSON.stringify(raw);
}

export interface NumberRange {
  readonly min: number;
  readonly max?: number;
  /** Said after "whole number of", e.g. "seconds". */
  readonly unit?: string;
}

function describeRange({ min, max, unit }: NumberRange): string {
  const what = unit === undefined ? 'a whole number' : `a whole number of ${unit}`;
  return max === undefined ? `${what} of at least ${min}` : `${what} from ${min} to ${max}`;
}

/** Any string but the empty one (an empty value means "not set" and never reaches a parser). */
export const text: Parser<string> = (raw) => {
  if (typeof raw !== 'string') throw new InvalidValue(`must be a string, got ${quote(raw)}`);
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

export function wholeNumber(range: NumberRange): Parser<number> {
  return (raw) => {
    let value = NaN;
    if (typeof raw === 'number' && Number.isSafeInteger(raw)) value = raw;
    if (typeof raw === 'string' && /^\d{1,15}$/.test(raw)) value = Number(raw);
    if (!(value >= range.min && value <= (range.max ?? Number.MAX_SAFE_INTEGER))) {
      throw new InvalidValue(`must be ${describeRange(range)}, got ${quote(raw)}`);
    }
    return value;
  };
}

export const positiveNumber: Parser<number> = (raw) => {
  let value = NaN;
  if (typeof raw === 'number' && Number.isFinite(raw)) value = raw;
  if (typeof raw === 'string' && /^\d{1,15}(\.\d+)?$/.test(raw)) value = Number(raw);
  if (!(value > 0)) throw new InvalidValue(`must be a positive number, got ${quote(raw)}`);
  return value;
};

export function seconds(range: Omit<NumberRange, 'unit'>): Parser<Duration> {
  const parse = wholeNumber({ ...range, unit: 'seconds' });
  return (raw) => Duration.seconds(parse(raw));
}

export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return (raw) => {
    const value = values.find((candidate) => candidate === raw);
    if (value === undefined) throw new InvalidValue(`must be one of ${values.join(', ')}, got ${quote(raw)}`);
    return value;
  };
}

export const boolean: Parser<boolean> = (raw) => {
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new InvalidValue(`must be true or false, got ${quote(raw)}`);
};

/** A number above `above` and below `below`, neither included: e.g. a share of requests in percent. */
export function numberBetween(range: { readonly above: number; readonly below: number }): Parser<number> {
  return (raw) => {
    let value = NaN;
    if (typeof raw === 'number' && Number.isFinite(raw)) value = raw;
    if (typeof raw === 'string' && /^\d{1,15}(\.\d+)?$/.test(raw)) value = Number(raw);
    if (!(value > range.above && value < range.below)) {
      throw new InvalidValue(
        `must be a number greater than ${range.above} and less than ${range.below}, got ${quote(raw)}`,
      );
    }
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
    throw new InvalidValue(
      `must be one of ${[...RETENTION_BY_DAYS.keys()].join(', ')} (days), got ${quote(raw)}`,
    );
  }
  return retention;
};
