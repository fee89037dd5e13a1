import { contentTypeProblem, parseMediaType } from '../../../../lambda/payment/media-type';

describe('parseMediaType', () => {
  it('reads type, subtype and parameters, lower-casing the case-insensitive parts', () => {
    expect(parseMediaType('Application/JSON; Charset="UTF-8" ;;\tq=1;')).toEqual({
      type: 'application',
      subtype: 'json',
      parameters: [
        { name: 'charset', value: 'UTF-8' },
        { name: 'q', value: '1' },
      ],
    });
  });

  it('unescapes a quoted-string', () => {
    expect(parseMediaType('text/plain; x="a\\"b\\\\c; d"')?.parameters).toEqual([
      { name: 'x', value: 'a"b\\c; d' },
    ]);
  });

  it.each([
    ['space and tab around the value', ' \tapplication/json\t '],
    ['OWS around the semicolon', 'application/json \t; \tcharset=utf-8'],
    ['an empty parameter list entry', 'application/json;'],
    ['obs-text in a quoted-string', 'application/json; x="\u00e9"'],
  ])('accepts %s', (_label, value) => {
    expect(parseMediaType(value)).toMatchObject({ type: 'application', subtype: 'json' });
  });

  it.each([
    ['an empty value', ''],
    ['no subtype', 'application'],
    ['an empty subtype', 'application/'],
    ['space around the slash', 'application / json'],
    ['a non-breaking space before the value', '\u00a0application/json'],
    ['a vertical tab after the value', 'application/json\u000b'],
    ['a form feed after the value', 'application/json\f'],
    ['a line separator after the value', 'application/json\u2028'],
    ['a non-breaking space before the semicolon', 'application/json\u00a0; charset=utf-8'],
    ['space around "="', 'application/json; charset = utf-8'],
    ['a parameter without a value', 'application/json; charset'],
    ['a parameter with an empty value', 'application/json; charset='],
    ['a comma-joined list', 'application/json, text/plain'],
    ['an unterminated quoted-string', 'application/json; x="abc'],
    ['a control character in a quoted-string', 'application/json; x="a\u0001b"; y=z'],
    ['a character above U+00FF in a quoted-string', 'application/json; x="\u20ac"'],
    ['text after a quoted-string', 'application/json; x="a"b'],
    ['a non-token character in the type', 'appli@cation/json'],
  ])('refuses %s', (_label, value) => {
    expect(parseMediaType(value)).toBeUndefined();
  });
});

describe('contentTypeProblem', () => {
  it.each([
    [['application/json']],
    [['application/json; charset=utf-8']],
    [['Application/JSON;charset=UTF-8']],
    [['application/json; charset="utf-8"']],
    [['  application/json  ']],
    [['application/json; version=2']],
  ])('accepts %j', (values) => {
    expect(contentTypeProblem(values)).toBeUndefined();
  });

  it.each([
    [[], 'missing_content_type'],
    [['application/json', 'application/json'], 'repeated_content_type'],
    [[''], 'malformed_content_type'],
    [['\u00a0application/json'], 'malformed_content_type'],
    [['text/plain'], 'not_application_json'],
    [['application/jsonx'], 'not_application_json'],
    [['application/vnd.api+json'], 'not_application_json'],
    [['application/json; charset=iso-8859-1'], 'charset_not_utf8'],
    [['application/json; charset=utf8'], 'charset_not_utf8'],
    [['application/json; charset=utf-8; charset=utf-16'], 'charset_not_utf8'],
  ])('refuses %j as %s', (values, problem) => {
    expect(contentTypeProblem(values)).toBe(problem);
  });
});
