import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  boolean,
  checkedNumber,
  numberBetween,
  InvalidValue,
  matching,
  oneOf,
  positiveNumber,
  retentionDays,
  seconds,
  text,
  wholeNumber,
} from '../../../bin/context-values';

describe('context value parsers', () => {
  it.each([
    [true, true],
    ['true', true],
    [false, false],
    ['false', false],
  ])('reads %j as the boolean %j', (raw, expected) => {
    expect(boolean(raw)).toBe(expected);
  });

  it.each(['yes', 'TRUE', '1', 1, null])('refuses %j as a boolean', (raw) => {
    expect(() => boolean(raw)).toThrow(InvalidValue);
    expect(() => boolean(raw)).toThrow(
      `must be true or false, got ${typeof raw === 'string' ? `"${raw}"` : JSON.stringify(raw)}`,
    );
  });

  it.each([
    ['30', 30],
    [30, 30],
    ['0', 0],
  ])('reads the whole number %j', (raw, expected) => {
    expect(wholeNumber({ min: 0 })(raw)).toBe(expected);
  });

  it.each([
    ['-1', 'must be a whole number of at least 0, got "-1"'],
    [1.5, 'must be a whole number of at least 0, got 1.5'],
    ['1e3', 'must be a whole number of at least 0, got "1e3"'],
    [' 1', 'must be a whole number of at least 0, got " 1"'],
    [true, 'must be a whole number of at least 0, got true'],
  ])('refuses %j as a whole number', (raw, message) => {
    expect(() => wholeNumber({ min: 0 })(raw)).toThrow(message);
  });

  it('says the range and the unit of a bounded whole number', () => {
    const parse = wholeNumber({ min: 5, max: 10, unit: 'apples' });

    expect(parse('5')).toBe(5);
    expect(parse(10)).toBe(10);
    expect(() => parse('11')).toThrow('must be a whole number of apples from 5 to 10, got "11"');
  });

  it('reads seconds as a Duration', () => {
    expect(seconds({ min: 1, max: 60 })('45').toSeconds()).toBe(45);
    expect(() => seconds({ min: 1, max: 60 })('61')).toThrow(
      'must be a whole number of seconds from 1 to 60, got "61"',
    );
  });

  it.each([
    ['0.5', 0.5],
    [12.5, 12.5],
    ['100', 100],
  ])('reads the positive number %j', (raw, expected) => {
    expect(positiveNumber()(raw)).toBe(expected);
  });

  it.each(['0', '-1', 'fast', Infinity])('refuses %j as a positive number', (raw) => {
    expect(() => positiveNumber()(raw)).toThrow(InvalidValue);
  });

  it('reads one of a list of words, exactly', () => {
    const level = oneOf(['low', 'high'] as const);

    expect(level('high')).toBe('high');
    expect(() => level('HIGH')).toThrow('must be one of low, high, got "HIGH"');
  });

  it('refuses anything but a string as text', () => {
    expect(text('abc')).toBe('abc');
    expect(() => text(['a'])).toThrow('must be a string, got ["a"]');
  });

  it('checks a format with the words the construct uses for it', () => {
    const parse = matching({ pattern: /^[a-z]+$/, description: 'lower-case letters' });

    expect(parse('abc')).toBe('abc');
    expect(() => parse('aBc')).toThrow('must be lower-case letters, got "aBc"');
  });

  it('reads a number strictly between two bounds', () => {
    const share = numberBetween({ above: 0, below: 100 });
    expect(share('2.5')).toBe(2.5);
    expect(share(1)).toBe(1);
    expect(() => share('0')).toThrow('must be a number greater than 0 and less than 100, got "0"');
    expect(() => share(100)).toThrow('must be a number greater than 0 and less than 100, got 100');
    expect(() => share('1e2')).toThrow('must be a number greater than 0 and less than 100, got "1e2"');
  });

  it('reads a number checked by a rule of its own, and refuses it in that rule’s words', () => {
    const even = checkedNumber((value) => (value % 2 === 0 ? undefined : 'must be an even number'));

    expect(even('4')).toBe(4);
    expect(even(2.0)).toBe(2);
    expect(() => even('3')).toThrow(new InvalidValue('must be an even number, got "3"'));
    expect(() => even(3)).toThrow('must be an even number, got 3');
    expect(() => even('4e0')).toThrow('must be an even number, got "4e0"');
  });

  it('reads a retention CloudWatch Logs offers', () => {
    expect(retentionDays('30')).toBe(RetentionDays.ONE_MONTH);
    expect(retentionDays(9999)).toBe(RetentionDays.INFINITE);
    expect(() => retentionDays('month')).toThrow(/^must be one of 1, 3, 5, .* \(days\), got "month"$/);
  });
});
