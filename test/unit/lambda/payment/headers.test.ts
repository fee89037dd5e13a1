import { RequestHeaders } from '../../../../lambda/payment/headers';

describe('RequestHeaders', () => {
  it('finds a header whatever the casing of the name', () => {
    const headers = RequestHeaders.fromMaps({ 'APP-ID': 'demo' }, {});

    expect(headers.all('app-id')).toEqual(['demo']);
    expect(headers.all('App-Id')).toEqual(['demo']);
  });

  it('takes every value of a repeated header from multiValueHeaders, not the single one in headers', () => {
    const headers = RequestHeaders.fromMaps({ 'App-key': 'second' }, { 'App-key': ['first', 'second'] });

    expect(headers.all('app-key')).toEqual(['first', 'second']);
  });

  it('merges one header sent under two casings into one list, from either map', () => {
    const fromMulti = RequestHeaders.fromMaps({ 'app-key': 'b' }, { 'App-Key': ['a'], 'app-key': ['b'] });
    const fromSingle = RequestHeaders.fromMaps({ 'App-Key': 'a', 'app-key': 'b' }, null);

    expect(fromMulti.all('APP-KEY')).toEqual(['a', 'b']);
    expect(fromSingle.all('APP-KEY')).toEqual(['a', 'b']);
  });

  it('falls back to headers when multiValueHeaders is null or lacks the name', () => {
    const headers = RequestHeaders.fromMaps({ 'Content-Type': 'application/json' }, null);

    expect(headers.all('content-type')).toEqual(['application/json']);
  });

  it.each([
    ['null', null],
    ['absent', undefined],
    ['a string', 'App-id: demo'],
    ['a number', 42],
    ['an array', [['App-id', 'demo']]],
  ])('reads a map that is %s as empty: a header not sent has no values', (_label, map) => {
    const headers = RequestHeaders.fromMaps(map, map);

    expect(headers.all('app-id')).toEqual([]);
  });

  it.each([
    ['null', null],
    ['an empty list', []],
    ['absent', undefined],
  ])('falls back to headers when the multiValueHeaders entry is %s', (_label, entry) => {
    const headers = RequestHeaders.fromMaps({ 'App-key': 'k' }, { 'App-key': entry });

    expect(headers.all('app-key')).toEqual(['k']);
  });

  it('reads a multiValueHeaders entry that is a bare string as that one value', () => {
    const headers = RequestHeaders.fromMaps({}, { 'App-key': 'k' });

    expect(headers.all('app-key')).toEqual(['k']);
  });

  it.each([
    ['a number in headers', { 'App-key': 1234567890123456 }, undefined, ['']],
    ['a boolean in headers', { 'App-key': true }, undefined, ['']],
    ['an object in headers', { 'App-key': { value: 'k' } }, undefined, ['']],
    ['a number in a multi-value list', undefined, { 'App-key': ['k', 7] }, ['k', '']],
    ['null in a multi-value list', undefined, { 'App-key': [null, 'k'] }, ['', 'k']],
    ['a number as a multi-value entry', undefined, { 'App-key': 7 }, ['']],
  ])('counts %s as an empty value, never as its text', (_label, single, multi, expected) => {
    const headers = RequestHeaders.fromMaps(single, multi);

    expect(headers.all('app-key')).toEqual(expected);
  });

  it('ignores a null value in headers: it says nothing about the header', () => {
    const headers = RequestHeaders.fromMaps({ 'App-key': null, 'app-key': 'k' }, undefined);

    expect(headers.all('app-key')).toEqual(['k']);
  });

  it('keeps a header named __proto__ as a header', () => {
    const headers = RequestHeaders.fromMaps(JSON.parse('{"__proto__": "x"}') as unknown, undefined);

    expect(headers.all('__proto__')).toEqual(['x']);
  });
});
