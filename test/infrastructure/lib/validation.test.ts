import { Duration, Token } from 'aws-cdk-lib';
import {
  describeOneOf,
  describeOpenInterval,
  describePositiveNumber,
  describeValue,
  describeWholeNumber,
  requireFormat,
  requireInOpenInterval,
  requireNoProblem,
  requireOneOf,
  requirePositiveNumber,
  requireWholeDuration,
  requireWholeNumber,
} from '../../../lib/validation';

describe('the words for a valid value', () => {
  it.each([
    [{ min: 2 }, 'a whole number of at least 2'],
    [{ min: 1, unit: 'requests' }, 'a whole number of requests of at least 1'],
    [{ min: 128, max: 10_240, unit: 'MiB' }, 'a whole number of MiB from 128 to 10240'],
  ])('describe the whole numbers %j as "%s"', (range, words) => {
    expect(describeWholeNumber(range)).toBe(words);
  });

  it('describe a positive number with its unit, and an open interval with its noun', () => {
    expect(describePositiveNumber()).toBe('a positive number');
    expect(describePositiveNumber('requests per second')).toBe('a positive number of requests per second');
    expect(describeOpenInterval({ above: 0, below: 100 })).toBe('a number greater than 0 and less than 100');
    expect(describeOpenInterval({ above: 0, below: 100, noun: 'percentage' })).toBe(
      'a percentage greater than 0 and less than 100',
    );
  });

  it('describe a choice of words', () => {
    expect(describeOneOf(['open', 'closed'])).toBe('one of open, closed');
  });

  it.each<[unknown, string]>([
    ['64', '"64"'],
    [64, '64'],
    [1.5, '1.5'],
    [Infinity, 'Infinity'],
    [true, 'true'],
    [null, 'null'],
    [['a'], '["a"]'],
  ])('show the value %j as %s', (value, shown) => {
    expect(describeValue(value)).toBe(shown);
  });
});

describe('the checks constructs run', () => {
  it('name the prop, the valid values and the value given, in one sentence', () => {
    expect(() => {
      requireWholeNumber('memorySize', { min: 128, max: 10_240, unit: 'MiB' }, 64);
    }).toThrow('memorySize must be a whole number of MiB from 128 to 10240, got 64');
    expect(() => {
      requireWholeNumber('memorySize', { min: 128, max: 10_240, unit: 'MiB' }, 200.5);
    }).toThrow('memorySize must be a whole number of MiB from 128 to 10240, got 200.5');
    expect(() => {
      requirePositiveNumber('throttlingRateLimit', 'requests per second', 0);
    }).toThrow('throttlingRateLimit must be a positive number of requests per second, got 0');
    expect(() => {
      requirePositiveNumber('throttlingRateLimit', 'requests per second', Infinity);
    }).toThrow('throttlingRateLimit must be a positive number of requests per second, got Infinity');
    expect(() => {
      requireInOpenInterval('rate', { above: 0, below: 100, noun: 'percentage' }, 100);
    }).toThrow('rate must be a percentage greater than 0 and less than 100, got 100');
    expect(() => {
      requireFormat('stageName', { pattern: /^[a-z]+$/, description: 'lower-case letters' }, 'v 1');
    }).toThrow('stageName must be lower-case letters, got "v 1"');
  });

  it('take the words of a rule defined elsewhere, and name the prop and the value given', () => {
    const even = (value: number): string | undefined =>
      value % 2 === 0 ? undefined : 'must be an even number';

    expect(() => {
      requireNoProblem('pairs', even, 3);
    }).toThrow('pairs must be an even number, got 3');
    expect(() => {
      requireNoProblem('pairs', even, 4);
    }).not.toThrow();
  });

  it('refuse a word that is not one of the choices', () => {
    const modes = ['open', 'closed'] as const;

    expect(() => {
      requireOneOf('failure', modes, 'ajar' as (typeof modes)[number]);
    }).toThrow('failure must be one of open, closed, got "ajar"');
    expect(() => {
      requireOneOf('failure', modes, 'closed');
    }).not.toThrow();
  });

  it('give a Duration in the unit the range counts in', () => {
    const range = { min: 1, max: 3600, unit: 'seconds' } as const;

    expect(() => {
      requireWholeDuration('keyCacheTtl', range, Duration.millis(1500));
    }).toThrow('keyCacheTtl must be a whole number of seconds from 1 to 3600, got 1.5');
    expect(() => {
      requireWholeDuration('every', { min: 4, unit: 'hours' }, Duration.minutes(270));
    }).toThrow('every must be a whole number of hours of at least 4, got 4.5');
    expect(() => {
      requireWholeDuration('keyCacheTtl', range, Duration.hours(1));
    }).not.toThrow();
  });

  it('leave values that are tokens to CloudFormation', () => {
    const range = { min: 1, max: 10 };

    expect(() => {
      requireWholeNumber('n', range, Token.asNumber({ Ref: 'N' }));
    }).not.toThrow();
    expect(() => {
      requireWholeDuration(
        'd',
        { ...range, unit: 'seconds' },
        Duration.seconds(Token.asNumber({ Ref: 'D' })),
      );
    }).not.toThrow();
    expect(() => {
      requireFormat('s', { pattern: /^x$/, description: 'x' }, Token.asString({ Ref: 'S' }));
    }).not.toThrow();
    expect(() => {
      requireNoProblem('n', () => 'must be nothing', Token.asNumber({ Ref: 'N' }));
    }).not.toThrow();
  });
});
