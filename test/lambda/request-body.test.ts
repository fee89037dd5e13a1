import { isAcceptableJsonBody, isJsonContentType } from '../../lambda/payment/request-body';

describe('isJsonContentType', () => {
  it.each([
    [['application/json'], true],
    [['application/json; charset=utf-8'], true],
    [['Application/JSON;charset=UTF-8'], true],
    [['  application/json  '], true],
    [[], false],
    [[''], false],
    [['text/plain'], false],
    [['application/jsonx'], false],
    [['application/vnd.api+json'], false],
    [['application/json', 'application/json'], false],
  ])('%j → %s', (values, expected) => {
    expect(isJsonContentType(values)).toBe(expected);
  });
});

describe('isAcceptableJsonBody', () => {
  it.each([
    [null, false, true],
    ['', false, true],
    ['  \n', false, true],
    ['{"amount": 10}', false, true],
    ['[1, 2]', false, true],
    ['"text"', false, true],
    ['{"amount": ', false, false],
    ['amount=10', false, false],
    [Buffer.from('{"ok":true}').toString('base64'), true, true],
    [Buffer.from('not json').toString('base64'), true, false],
  ])('%j (base64: %s) → %s', (body, isBase64Encoded, expected) => {
    expect(isAcceptableJsonBody(body, isBase64Encoded)).toBe(expected);
  });
});
