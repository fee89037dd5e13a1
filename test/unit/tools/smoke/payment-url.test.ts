import { readPaymentUrl, siblingUrl } from '../../../../tools/smoke/payment-url';

describe('readPaymentUrl', () => {
  it.each([
    'https://abcde12345.execute-api.eu-west-1.amazonaws.com/prod/payment',
    'https://api.example.com/payment',
    'https://api.example.com/v1/payment',
    'http://127.0.0.1:3000/payment',
    'http://127.1.2.3:3000/payment',
    'http://[::1]:3000/payment',
    'http://localhost:3000/payment',
  ])('accepts %s', (text) => {
    expect(readPaymentUrl(text)).toEqual({ ok: true, url: new URL(text) });
  });

  it.each([
    ['a relative URL', '/prod/payment', 'is not an absolute URL'],
    ['another scheme', 'ftp://api.example.com/payment', 'must start with https://'],
    [
      'plain HTTP off this machine',
      'http://10.0.0.5/payment',
      'must use https:// (http:// only for 127.0.0.1, ::1 or localhost): the key would cross the network in clear text',
    ],
    ['a user name', 'https://someone@api.example.com/payment', 'must not hold a user name or password'],
    ['a query', 'https://api.example.com/payment?x=1', 'must have no query string or fragment'],
    ['a fragment', 'https://api.example.com/payment#x', 'must have no query string or fragment'],
    [
      'a trailing slash',
      'https://api.example.com/payment/',
      'must be the URL of /payment: its path must end in /payment',
    ],
    [
      'another resource',
      'https://api.example.com/prod/payments',
      'must be the URL of /payment: its path must end in /payment',
    ],
  ])('refuses %s', (_label, text, problem) => {
    expect(readPaymentUrl(text)).toEqual({ ok: false, problem });
  });
});

describe('siblingUrl', () => {
  it('replaces the last path segment, keeping the stage or the root mapping', () => {
    expect(
      siblingUrl(new URL('https://abcde12345.execute-api.eu-west-1.amazonaws.com/prod/payment')).href,
    ).toBe('https://abcde12345.execute-api.eu-west-1.amazonaws.com/prod/smoke-test-not-a-path');
    expect(siblingUrl(new URL('https://api.example.com/payment')).href).toBe(
      'https://api.example.com/smoke-test-not-a-path',
    );
  });
});
