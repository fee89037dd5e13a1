import type { CheckResult } from '../../../../tools/smoke/evaluate';
import { formatJson, formatTable, type SmokeReport } from '../../../../tools/smoke/report';

const PASSED: CheckResult = {
  id: 'accepted',
  title: 'POST with the key',
  expected: '200 ok',
  got: '200 ok',
  status: 200,
  passed: true,
  problems: [],
};
const FAILED: CheckResult = {
  id: 'wrong-media-type',
  title: 'Content-Type: text/plain',
  expected: '415 unsupported_media_type',
  got: '200 ok',
  status: 200,
  passed: false,
  problems: ['status 200, expected 415', 'code "ok", expected "unsupported_media_type"'],
};

const report = (results: readonly CheckResult[], stack?: string): SmokeReport => ({
  url: 'https://api.example.com/payment',
  appId: 'demo',
  ...(stack === undefined ? {} : { stack }),
  requestsSent: results.length,
  results,
});

describe('formatTable', () => {
  it('prints a heading, one aligned row per check and the verdict', () => {
    expect(formatTable(report([PASSED]))).toBe(
      [
        'payment-api smoke test of https://api.example.com/payment as App-id demo',
        'every answer must be JSON with Cache-Control: no-store',
        '',
        'CHECK              EXPECTED  GOT     RESULT',
        'POST with the key  200 ok    200 ok  pass',
        '',
        'passed: 1 of 1 checks, 1 request sent',
        '',
      ].join('\n'),
    );
  });

  it('says in the failing row why, and names the failed rows in the verdict', () => {
    const lines = formatTable(report([PASSED, FAILED], 'PaymentApi')).split('\n');

    expect(lines[0]).toBe(
      'payment-api smoke test of https://api.example.com/payment (stack PaymentApi) as App-id demo',
    );
    expect(lines[3]).toBe('CHECK                     EXPECTED                    GOT     RESULT');
    expect(lines[5]).toBe(
      'Content-Type: text/plain  415 unsupported_media_type  200 ok  FAIL: status 200, expected 415; code "ok", expected "unsupported_media_type"',
    );
    expect(lines[7]).toBe('FAILED: 1 of 2 checks (Content-Type: text/plain), 2 requests sent');
  });
});

describe('formatJson', () => {
  it('prints one JSON document with the verdict and every row', () => {
    const text = formatJson(report([PASSED, FAILED], 'PaymentApi'));

    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(text)).toEqual({
      url: 'https://api.example.com/payment',
      appId: 'demo',
      stack: 'PaymentApi',
      passed: false,
      requestsSent: 2,
      checks: [PASSED, FAILED],
    });
  });
});
