import { readJsonBody, type RequestBody } from '../../../../lambda/payment/request-body';

const text = (value: string): RequestBody => ({ kind: 'text', text: value, isBase64Encoded: false });
const base64 = (value: string): RequestBody => ({ kind: 'text', text: value, isBase64Encoded: true });
const base64Of = (bytes: Buffer | string): RequestBody => base64(Buffer.from(bytes).toString('base64'));

describe('readJsonBody', () => {
  it.each<[string, RequestBody]>([
    ['no body', { kind: 'none' }],
    ['zero bytes', text('')],
    ['JSON whitespace only', text(' \t\r\n ')],
    ['zero bytes in base64', base64('')],
    ['JSON whitespace in base64', base64Of(' \n')],
    ['a byte-order mark alone', text('\uFEFF')],
  ])('reads %s as empty', (_label, body) => {
    expect(readJsonBody(body)).toEqual({ ok: true, kind: 'empty' });
  });

  it.each<[string, RequestBody, unknown]>([
    ['an object', text('{"amount": 10}'), { amount: 10 }],
    ['an array', text('[1, 2]'), [1, 2]],
    ['a string', text('"text"'), 'text'],
    ['a number with JSON whitespace around it', text('\r\n 5 \t'), 5],
    ['a base64 object', base64Of('{"ok":true}'), { ok: true }],
    ['UTF-8 text in base64', base64Of('{"name":"Zoë 😀"}'), { name: 'Zoë 😀' }],
    ['a leading byte-order mark', text('\uFEFF{"a":1}'), { a: 1 }],
    ['a leading byte-order mark in base64', base64Of(Buffer.from([0xef, 0xbb, 0xbf, 0x31])), 1],
    ['an escaped lone surrogate', text('"\\ud800"'), '\ud800'],
    [
      'arrays nested 64 deep',
      text('['.repeat(64) + ']'.repeat(64)),
      JSON.parse('['.repeat(64) + ']'.repeat(64)),
    ],
    ['brackets and escaped quotes in a string', text('"[[\\"[[{{"'), '[["[[{{'],
    ['a thousand brackets in a string', text(`"${'['.repeat(1_000)}"`), '['.repeat(1_000)],
    ['65,536 bytes of JSON', text(`"${'a'.repeat(65_534)}"`), 'a'.repeat(65_534)],
    ['base64 of 65,536 bytes of JSON', base64Of(`"${'a'.repeat(65_534)}"`), 'a'.repeat(65_534)],
  ])('accepts %s', (_label, body, value) => {
    expect(readJsonBody(body)).toEqual({ ok: true, kind: 'json', value });
  });

  it.each<[string, RequestBody, string]>([
    ['text that is not JSON', text('amount=10'), 'not_json'],
    ['truncated JSON', text('{"amount": '), 'not_json'],
    ['two JSON texts', text('{} {}'), 'not_json'],
    ['a non-breaking space only', text('\u00a0'), 'not_json'],
    ['JSON after a non-breaking space', text('\u00a0{}'), 'not_json'],
    ['JSON after a vertical tab', text('\u000b{}'), 'not_json'],
    ['two byte-order marks', text('\uFEFF\uFEFF{}'), 'not_json'],
    ['a byte-order mark that is not leading', text(' \uFEFF{}'), 'not_json'],
    ['a raw lone surrogate', text('"\ud800"'), 'not_utf8'],
    ['base64 of text that is not JSON', base64Of('not json'), 'not_json'],
    ['base64 of bytes that are not UTF-8', base64Of(Buffer.from([0x22, 0xff, 0x22])), 'not_utf8'],
    ['base64 of an encoded surrogate', base64Of(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])), 'not_utf8'],
    ['text that is not base64', base64('{"a":1}'), 'not_base64'],
    ['base64 without its padding', base64('e30'), 'not_base64'],
    ['base64url', base64('-_-_'), 'not_base64'],
    ['a body that is not a string', { kind: 'notText' }, 'not_text'],
    ['65,537 bytes of JSON whitespace', text(' '.repeat(65_537)), 'body_too_large'],
    [
      '65,537 bytes, some of them two-byte characters',
      text(`"${'é'.repeat(10)}${'a'.repeat(65_515)}"`),
      'body_too_large',
    ],
    ['base64 of 65,537 bytes', base64Of(Buffer.alloc(65_537, 0x20)), 'body_too_large'],
    [
      'base64 text longer than any 64 KiB body encodes to',
      base64('AAAA'.repeat(21_846) + 'AA=='),
      'body_too_large',
    ],
    ['arrays nested 65 deep', text('['.repeat(65) + ']'.repeat(65)), 'json_too_deep'],
    [
      'objects and arrays nested 65 deep',
      text('[{"a":'.repeat(32) + '[1]' + '}]'.repeat(32)),
      'json_too_deep',
    ],
    ['an unclosed string after deep nesting', text('['.repeat(65) + '"'), 'json_too_deep'],
  ])('refuses %s', (_label, body, problem) => {
    expect(readJsonBody(body)).toEqual({ ok: false, problem });
  });
});
