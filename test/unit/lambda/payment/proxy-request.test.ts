import { readProxyRequest } from '../../../../lambda/payment/proxy-request';
import { baseEvent } from '../../../support/events';

describe('readProxyRequest', () => {
  it('reads headers, body, request id and source IP from an API Gateway event', () => {
    const request = readProxyRequest({
      ...baseEvent,
      headers: { 'App-id': 'demo' },
      multiValueHeaders: { 'App-id': ['demo'] },
      body: 'e30=',
      isBase64Encoded: true,
    });

    expect(request.headers.all('app-id')).toEqual(['demo']);
    expect(request.body).toEqual({ kind: 'text', text: 'e30=', isBase64Encoded: true });
    expect(request.requestId).toBe('c6af9ac6-7b61-11e6-9a41-93e8deadbeef');
    expect(request.sourceIp).toBe('203.0.113.10');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['a string', '{"body": "x"}'],
    ['an array', [baseEvent]],
    ['an empty object', {}],
  ])('reads an event that is %s as a request with nothing in it', (_label, event) => {
    const request = readProxyRequest(event);

    expect(request.headers.all('app-id')).toEqual([]);
    expect(request.body).toEqual({ kind: 'none' });
    expect(request.requestId).toBeUndefined();
    expect(request.sourceIp).toBeUndefined();
  });

  it.each([
    ['absent', undefined, { kind: 'none' }],
    ['null', null, { kind: 'none' }],
    ['empty', '', { kind: 'text', text: '', isBase64Encoded: false }],
    ['a number', 42, { kind: 'notText' }],
    ['an object', { amount: 1 }, { kind: 'notText' }],
    ['an array', ['{}'], { kind: 'notText' }],
  ])('reads a body that is %s', (_label, body, expected) => {
    expect(readProxyRequest({ ...baseEvent, body }).body).toEqual(expected);
  });

  it.each([
    ['the string "true"', 'true'],
    ['the number 1', 1],
    ['null', null],
  ])('does not take isBase64Encoded as %s to mean base64', (_label, isBase64Encoded) => {
    expect(readProxyRequest({ ...baseEvent, body: 'e30=', isBase64Encoded }).body).toEqual({
      kind: 'text',
      text: 'e30=',
      isBase64Encoded: false,
    });
  });

  it.each([
    ['a number', 42],
    ['an empty string', ''],
    ['a string with a line break', 'id\r\nX-Injected: 1'],
    ['a string with a space', 'two words'],
    ['an overlong string', 'x'.repeat(129)],
  ])('leaves out a request id that is %s', (_label, requestId) => {
    const event = { ...baseEvent, requestContext: { ...baseEvent.requestContext, requestId } };

    expect(readProxyRequest(event).requestId).toBeUndefined();
  });

  it.each([
    ['null', null],
    ['a string', 'ctx'],
    ['an identity that is null', { requestId: 'r-1', identity: null }],
  ])('reads a requestContext that is %s without failing', (_label, requestContext) => {
    const request = readProxyRequest({ ...baseEvent, requestContext });

    expect(request.sourceIp).toBeUndefined();
  });
});
