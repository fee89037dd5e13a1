import { RequestHeaders } from '../../lambda/payment/headers';

describe('RequestHeaders', () => {
  it('finds a header whatever the casing of the name', () => {
    const headers = RequestHeaders.fromEvent({ headers: { 'APP-ID': 'demo' }, multiValueHeaders: {} });

    expect(headers.all('app-id')).toEqual(['demo']);
    expect(headers.all('App-Id')).toEqual(['demo']);
  });

  it('takes every value of a repeated header from multiValueHeaders, not the single one in headers', () => {
    const headers = RequestHeaders.fromEvent({
      headers: { 'App-key': 'second' },
      multiValueHeaders: { 'App-key': ['first', 'second'] },
    });

    expect(headers.all('app-key')).toEqual(['first', 'second']);
  });

  it('merges one header sent under two casings into one list', () => {
    const headers = RequestHeaders.fromEvent({
      headers: { 'app-key': 'b' },
      multiValueHeaders: { 'App-Key': ['a'], 'app-key': ['b'] },
    });

    expect(headers.all('APP-KEY')).toEqual(['a', 'b']);
  });

  it('falls back to headers when multiValueHeaders is null or lacks the name', () => {
    const headers = RequestHeaders.fromEvent({
      headers: { 'Content-Type': 'application/json' },
      multiValueHeaders: null,
    });

    expect(headers.all('content-type')).toEqual(['application/json']);
  });

  it('returns no values for a header that was not sent, or when both maps are null', () => {
    const headers = RequestHeaders.fromEvent({ headers: null, multiValueHeaders: null });

    expect(headers.all('app-id')).toEqual([]);
  });
});
