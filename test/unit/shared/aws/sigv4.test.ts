/**
 * The signer against AWS's published SigV4 test suite: the POST cases, those with a body first. The vectors are
 * copied here as data from the suite as mhart/aws4 ships it (test/aws-sig-v4-test-suite/<case>/<case>.req and .authz,
 * at 9d00a5a): credentials AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, us-east-1, service "service",
 * 2015-08-30T12:36:00Z.
 */
import { amzDate, signRequest } from '../../../../shared/aws/sigv4';

const SUITE_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const SUITE_SCOPE = { region: 'us-east-1', service: 'service' };
const SUITE_TIME = new Date('2015-08-30T12:36:00Z');
const SUITE_TOKEN =
  'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';

interface Vector {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly sessionToken?: string;
  /** The case's .authz. */
  readonly authorization: string;
}

const VECTORS: readonly (readonly [string, Vector])[] = [
  [
    'post-x-www-form-urlencoded',
    {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Host: 'example.amazonaws.com' },
      body: 'Param1=value1',
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
    },
  ],
  [
    'post-x-www-form-urlencoded-parameters',
    {
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded; charset=utf8',
        Host: 'example.amazonaws.com',
      },
      body: 'Param1=value1',
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe',
    },
  ],
  [
    'post-sts-token/post-sts-header-before',
    {
      headers: { Host: 'example.amazonaws.com' },
      body: '',
      sessionToken: SUITE_TOKEN,
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead',
    },
  ],
  [
    'post-vanilla',
    {
      headers: { Host: 'example.amazonaws.com' },
      body: '',
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    },
  ],
];

describe("signRequest against AWS's SigV4 test suite", () => {
  it.each(VECTORS)('%s', async (_name, vector) => {
    const credentials =
      vector.sessionToken === undefined
        ? SUITE_CREDENTIALS
        : { ...SUITE_CREDENTIALS, sessionToken: vector.sessionToken };

    const headers = await signRequest(
      {
        method: 'POST',
        host: 'example.amazonaws.com',
        path: '/',
        headers: vector.headers,
        body: vector.body,
      },
      credentials,
      SUITE_SCOPE,
      SUITE_TIME,
    );

    expect(headers.Authorization).toBe(vector.authorization);
    expect(headers['X-Amz-Date']).toBe('20150830T123600Z');
    expect(headers['X-Amz-Security-Token']).toBe(vector.sessionToken);
  });

  it('writes the time it is given to the second, dropping milliseconds', () => {
    expect(amzDate(new Date('2015-08-30T12:36:59.999Z'))).toBe('20150830T123659Z');
  });

  it('sends the headers it was given unchanged, and adds nothing it does not sign', async () => {
    const headers = await signRequest(
      { method: 'POST', host: 'h', path: '/', headers: { Host: 'h', 'X-Amz-Target': 't.Op' }, body: '{}' },
      SUITE_CREDENTIALS,
      SUITE_SCOPE,
      SUITE_TIME,
    );

    expect(Object.keys(headers)).toEqual(['Host', 'X-Amz-Target', 'X-Amz-Date', 'Authorization']);
    expect(headers.Authorization).toContain('SignedHeaders=host;x-amz-date;x-amz-target,');
  });
});
