import { contentTypeProblem } from '../../../../lambda/payment/media-type';

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
