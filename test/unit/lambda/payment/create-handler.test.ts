import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { KeysUnavailableError, type KeyringProvider } from '../../../../lambda/payment/key-cache';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { generateKey, toCompactDigestForm } from '../../../../shared/keys/key-material';
import type { KeyFormatPolicy } from '../../../../shared/keys/credential-screen';
import { createHandler, type HandlerDependencies } from '../../../../lambda/payment/create-handler';
import { captureLogs } from '../../../support/capture-logger';
import { paymentEvent } from '../../../support/events';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY, SECRET_STRING } from '../../../support/keys';

const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
const DEMO_ID: [string, string] = ['App-id', 'demo'];
const DEMO_CREDENTIALS: Array<[string, string]> = [DEMO_ID, ['App-key', DEMO_KEY]];

/** A request with these credentials, as JSON. */
const credentials = (appId: string, appKey: string): Array<[string, string]> => [
  JSON_TYPE,
  ['App-id', appId],
  ['App-key', appKey],
];
/** demo's request with its first key, as JSON. */
const demoRequest = (overrides: Partial<APIGatewayProxyEvent> = {}) =>
  paymentEvent([JSON_TYPE, ...DEMO_CREDENTIALS], overrides);

const keysOf = (keyring: ReturnType<typeof parseKeyring>['keyring'], stale = false): KeyringProvider => ({
  getKeys: () => Promise.resolve({ keyring, stale }),
});
const keysFailing = (error: Error): KeyringProvider => ({ getKeys: () => Promise.reject(error) });
/** Keys parsed once (a spy on JSON.parse then sees only what the handler parses). */
const keyringProvider = keysOf(parseKeyring(SECRET_STRING).keyring);
const unavailableKeys = keysFailing(new KeysUnavailableError('keys have never loaded'));

/** A handler over the demo secret unless told otherwise, with the lines it logs and the metrics it counts. */
function handlerWith(dependencies: Partial<Omit<HandlerDependencies, 'logger' | 'metrics'>> = {}) {
  const logs = captureLogs();
  const counted: string[] = [];
  const metrics = { count: (name: string) => counted.push(name) };
  const handle = createHandler({ keys: keyringProvider, ...dependencies, logger: logs.logger, metrics });
  return { handle, logs, counted };
}

function bodyOf(result: APIGatewayProxyResult): Record<string, unknown> {
  return JSON.parse(result.body) as Record<string, unknown>;
}

describe('POST /payment handler', () => {
  describe('authenticated requests', () => {
    it('answer 200 ok with the first key of an app', async () => {
      const { handle } = handlerWith();

      const result = await handle(paymentEvent(credentials('demo', DEMO_KEY)));

      expect(result.statusCode).toBe(200);
      expect(bodyOf(result)).toEqual({ code: 'ok', message: 'Payment request accepted.' });
    });

    it('log the app and key id that matched, never the key', async () => {
      const { handle, logs } = handlerWith();

      await handle(demoRequest());

      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          message: 'request accepted',
          status: 200,
          appId: 'demo',
          keyId: expect.stringMatching(/^[0-9a-f]{12}$/) as unknown,
          apiRequestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
          sourceIp: '203.0.113.10',
        }),
      );
      expect(logs.lines.join('\n')).not.toContain(DEMO_KEY);
    });
  });

  describe('refused credentials', () => {
    const cases: Array<[string, Array<[string, string]>, string]> = [
      ['no headers at all', [], 'missing_app_id'],
      ['a wrong key and a body that is not JSON', credentials('demo', DEMO_KEY + 'x'), 'wrong_key'],
      ['an unknown app', credentials('nobody', DEMO_KEY), 'unknown_app'],
      [
        'bad credentials and no Content-Type',
        [
          ['App-id', 'nobody'],
          ['App-key', DEMO_KEY],
        ],
        'unknown_app',
      ],
    ];

    it.each(cases)('answer 401 with the same body for %s', async (_label, headers, reason) => {
      const { handle, logs } = handlerWith();

      const result = await handle(paymentEvent(headers, { body: 'not json' }));

      expect(result.statusCode).toBe(401);
      expect(result.body).toBe('{"code":"unauthorized","message":"Missing or invalid App-id or App-key."}');
      expect(result.headers).toMatchObject({ 'WWW-Authenticate': 'App-key realm="payment-api"' });
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ message: 'request refused', status: 401, reason }),
      );
    });
  });

  describe('authenticated requests with a bad media type or body', () => {
    // Which media types and bodies are refused, and why, is contentTypeProblem's and readJsonBody's (RFC 9110 and
    // RFC 8259, media-type.test.ts and request-body.test.ts): here, that the handler answers and logs their reason.
    it.each<[string, number, APIGatewayProxyEvent, Record<string, string>, string]>([
      [
        'a text/plain Content-Type',
        415,
        paymentEvent([['Content-Type', 'text/plain'], ...DEMO_CREDENTIALS]),
        { code: 'unsupported_media_type', message: 'Content-Type must be application/json.' },
        'not_application_json',
      ],
      [
        'a body that is not JSON',
        400,
        demoRequest({ body: 'not json' }),
        { code: 'bad_request', message: 'The request body is not valid JSON.' },
        'not_json',
      ],
    ])('answer %s with %i, and log why', async (_label, status, event, body, reason) => {
      const { handle, logs } = handlerWith();

      const result = await handle(event);

      expect(result.statusCode).toBe(status);
      expect(bodyOf(result)).toEqual(body);
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ message: 'request refused', status, appId: 'demo', reason }),
      );
    });
  });

  describe('when keys cannot be known', () => {
    it('answers 503 unavailable, never 200 or 401, and logs why', async () => {
      const { handle, logs } = handlerWith({ keys: unavailableKeys });

      const result = await handle(demoRequest());

      expect(result.statusCode).toBe(503);
      expect(bodyOf(result)).toEqual({
        code: 'unavailable',
        message: 'The service cannot check the request right now. Retry later.',
      });
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          level: 'error',
          status: 503,
          error: 'KeysUnavailableError: keys have never loaded',
        }),
      );
    });

    it('answers 500 with a generic body, and no stack, for an unexpected error', async () => {
      const { handle } = handlerWith({ keys: keysFailing(new TypeError('boom at line 12')) });

      const result = await handle(demoRequest());

      expect(result.statusCode).toBe(500);
      expect(bodyOf(result)).toEqual({ code: 'internal_error', message: 'An internal error occurred.' });
      expect(result.body).not.toContain('boom');
    });
  });

  describe('events with fields missing or of the wrong type', () => {
    const credentialsOnly = {
      headers: { 'App-id': 'demo', 'App-key': DEMO_KEY, 'Content-Type': 'application/json' },
    };

    it.each<[string, unknown, number]>([
      ['no event at all', undefined, 401],
      ['an event that is an array', [], 401],
      ['only headers (no multiValueHeaders, body, isBase64Encoded or requestContext)', credentialsOnly, 200],
      ['multiValueHeaders null', { ...credentialsOnly, multiValueHeaders: null }, 200],
      ['multiValueHeaders a string', { ...credentialsOnly, multiValueHeaders: 'App-key' }, 200],
      ['headers an array', { headers: [['App-id', 'demo']] }, 401],
      ['body null', { ...credentialsOnly, body: null }, 200],
      ['body a number', { ...credentialsOnly, body: 42 }, 400],
      ['body an object', { ...credentialsOnly, body: { amount: 1 } }, 400],
      ['isBase64Encoded a string', { ...credentialsOnly, body: '{}', isBase64Encoded: 'true' }, 200],
      ['requestContext null', { ...credentialsOnly, requestContext: null }, 200],
      ['App-key a number', { headers: { 'App-id': 'demo', 'App-key': 1234567890123456 } }, 401],
      [
        'a null next to the key in multiValueHeaders',
        { ...credentialsOnly, multiValueHeaders: { 'App-key': [null, DEMO_KEY] } },
        401,
      ],
      [
        'a null multiValueHeaders entry beside the key in headers',
        { ...credentialsOnly, multiValueHeaders: { 'App-key': null } },
        200,
      ],
      ['Content-Type a number', { headers: { ...credentialsOnly.headers, 'Content-Type': 1 } }, 415],
    ])(
      'answer %s with %i, never 500, and no X-Request-Id: the event has no usable request id',
      async (_label, event, status) => {
        const { handle } = handlerWith();

        const result = await handle(event);

        expect(result.statusCode).toBe(status);
        expect(result.headers).toMatchObject({
          'Content-Type': 'application/json',
          'Cache-Control': 'no-store',
        });
        expect(result.headers).not.toHaveProperty('X-Request-Id');
      },
    );

    it.each<[string, number, () => unknown]>([
      [
        'JSON nested 30,000 deep within 64 KiB',
        400,
        () => ({ ...credentialsOnly, body: '['.repeat(30_000) + ']'.repeat(30_000) }),
      ],
      [
        'a million values for App-key',
        401,
        () => ({
          ...credentialsOnly,
          multiValueHeaders: { 'App-key': new Array<null>(1_000_000).fill(null) },
        }),
      ],
    ])('answer an event with %s with %i, not 500', async (_label, status, makeEvent) => {
      const { handle } = handlerWith();

      const result = await handle(makeEvent());

      expect(result.statusCode).toBe(status);
    });
  });

  describe('bodies past the limits (64 KiB, 64 deep), at them, and any JSON allows', () => {
    it('answer 413 payload_too_large for a body over 64 KiB, and log why', async () => {
      const { handle, logs, counted } = handlerWith();

      const result = await handle(demoRequest({ body: `"${'a'.repeat(65_535)}"` }));

      expect(result.statusCode).toBe(413);
      expect(bodyOf(result)).toMatchObject({ code: 'payload_too_large' });
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          message: 'request refused',
          status: 413,
          appId: 'demo',
          reason: 'body_too_large',
        }),
      );
      expect(counted).toEqual(['PayloadTooLarge']);
    });

    it('never parses, decodes or copies a body over the limit, whatever its size', async () => {
      const { handle } = handlerWith();
      const parse = jest.spyOn(JSON, 'parse');
      const decode = jest.spyOn(Buffer, 'from');
      try {
        // Text of any length over the limit, and base64 whose length alone puts it over.
        const bodies = [
          { body: '['.repeat(65_537) },
          { body: '['.repeat(6_000_000) },
          { body: 'W1tb'.repeat(30_000), isBase64Encoded: true },
          { body: 'W1tb'.repeat(1_500_000), isBase64Encoded: true },
        ];
        for (const overrides of bodies) {
          const result = await handle(demoRequest(overrides));

          expect(result.statusCode).toBe(413);
        }
        expect(parse).not.toHaveBeenCalled();
        expect(decode).not.toHaveBeenCalled();
      } finally {
        parse.mockRestore();
        decode.mockRestore();
      }
    });

    it.each([
      ['arrays nested 65 deep', '['.repeat(65) + ']'.repeat(65)],
      ['objects nested 65 deep', '{"a":'.repeat(65) + '1' + '}'.repeat(65)],
    ])('answer 400 for %s, refused before it is parsed', async (_label, body) => {
      const { handle, logs } = handlerWith();
      const parse = jest.spyOn(JSON, 'parse');
      try {
        const result = await handle(demoRequest({ body }));

        expect(result.statusCode).toBe(400);
        expect(parse).not.toHaveBeenCalled();
      } finally {
        parse.mockRestore();
      }
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ status: 400, reason: 'json_too_deep' }),
      );
    });
  });

  it('asks for the keys of the app the request names, which say where they live (its shard), and none without credentials', async () => {
    const getKeys = jest.fn((appId: string) => keyringProvider.getKeys(appId));
    const { handle } = handlerWith({ keys: { getKeys } });

    const results = await Promise.all([
      handle(demoRequest()),
      handle(paymentEvent(credentials('nobody', DEMO_KEY))),
      handle(paymentEvent([JSON_TYPE])),
    ]);

    expect(results.map((result) => result.statusCode)).toEqual([200, 401, 401]);
    expect(getKeys.mock.calls).toEqual([['demo'], ['nobody']]);
  });

  describe('credentials refused before any lookup (the key format and App-ids no app can have)', () => {
    const CURRENT_KEY = generateKey();
    const OTHER_PREFIX_KEY = generateKey('acme');
    const KEYED_SECRET = JSON.stringify({
      demo: DEMO_KEY,
      current: toCompactDigestForm(CURRENT_KEY),
      other: toCompactDigestForm(OTHER_PREFIX_KEY),
    });
    const keyed = parseKeyring(KEYED_SECRET).keyring;

    function screenedHandler(keyFormat?: KeyFormatPolicy) {
      const getKeys = jest.fn(() => Promise.resolve({ keyring: keyed, stale: false }));
      return {
        ...handlerWith({ keys: { getKeys }, ...(keyFormat === undefined ? {} : { keyFormat }) }),
        getKeys,
      };
    }

    const wrongChecksum = CURRENT_KEY.slice(0, -1) + (CURRENT_KEY.endsWith('0') ? '1' : '0');

    it.each<[string, string, string, string]>([
      ['a prefixed key with a wrong checksum', 'current', wrongChecksum, 'malformed_key'],
      ['a key in the App-id header', CURRENT_KEY, CURRENT_KEY, 'invalid_app_id'],
    ])(
      'answer 401 to %s without reading any keys, logging neither App-id nor key',
      async (_label, appId, appKey, reason) => {
        const { handle, logs, getKeys, counted } = screenedHandler();

        const result = await handle(paymentEvent(credentials(appId, appKey)));

        expect(result.statusCode).toBe(401);
        expect(result.body).toBe('{"code":"unauthorized","message":"Missing or invalid App-id or App-key."}');
        expect(getKeys).not.toHaveBeenCalled();
        expect(logs.entries()).toEqual([
          expect.objectContaining({
            message: 'request refused',
            status: 401,
            reason,
            appId: null,
            keyId: null,
          }),
        ]);
        expect(logs.lines.join('\n')).not.toContain(appKey);
        expect(counted).toEqual(['Unauthorized']);
      },
    );

    it('look up a well-formed key of the prefix, a legacy key without it as before, and a key of another prefix as a legacy key (for this stack it has no prefix)', async () => {
      const { handle, getKeys } = screenedHandler();

      const results = await Promise.all([
        handle(paymentEvent(credentials('current', CURRENT_KEY))),
        handle(paymentEvent(credentials('demo', DEMO_KEY))),
        handle(paymentEvent(credentials('current', generateKey()))),
        handle(paymentEvent(credentials('other', OTHER_PREFIX_KEY))),
      ]);

      expect(results.map((result) => result.statusCode)).toEqual([200, 200, 401, 200]);
      expect(getKeys).toHaveBeenCalledTimes(4);
    });

    it("judge keys by the stack's own prefix", async () => {
      const { handle, logs, getKeys } = screenedHandler({ prefix: 'acme', legacyKeys: true });

      const results = await Promise.all([
        handle(paymentEvent(credentials('other', OTHER_PREFIX_KEY))),
        handle(paymentEvent(credentials('other', OTHER_PREFIX_KEY.slice(0, -2)))),
      ]);

      expect(results.map((result) => result.statusCode)).toEqual([200, 401]);
      expect(getKeys).toHaveBeenCalledTimes(1);
      expect(logs.entries()).toContainEqual(expect.objectContaining({ reason: 'malformed_key' }));
    });

    it('refuse keys without the prefix before any lookup when legacy keys are off', async () => {
      const { handle, logs, getKeys } = screenedHandler({ prefix: 'pay', legacyKeys: false });

      const results = await Promise.all([
        handle(paymentEvent(credentials('demo', DEMO_KEY))),
        handle(paymentEvent(credentials('current', CURRENT_KEY))),
      ]);

      expect(results.map((result) => result.statusCode)).toEqual([401, 200]);
      expect(getKeys.mock.calls).toEqual([['current']]);
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ reason: 'legacy_key', status: 401, appId: null, keyId: null }),
      );
    });

    it('answer 401, not 503, to a malformed key while the keys cannot be read: nothing was to be read', async () => {
      const { handle } = handlerWith({ keys: unavailableKeys });

      const result = await handle(paymentEvent(credentials('demo', wrongChecksum)));

      expect(result.statusCode).toBe(401);
    });
  });
});

describe('the outcome metrics', () => {
  it.each<[string, KeyringProvider, unknown, string]>([
    ['a valid key', keyringProvider, demoRequest(), 'Accepted'],
    ['a wrong key', keyringProvider, paymentEvent(credentials('demo', PARTNER_KEY)), 'Unauthorized'],
    ['no credentials', keyringProvider, paymentEvent([JSON_TYPE]), 'Unauthorized'],
    [
      'a text/plain body',
      keyringProvider,
      paymentEvent([['Content-Type', 'text/plain'], ...DEMO_CREDENTIALS]),
      'UnsupportedMediaType',
    ],
    ['a body that is not JSON', keyringProvider, demoRequest({ body: '{not json' }), 'BadRequest'],
    ['keys that cannot be read', unavailableKeys, demoRequest(), 'Unavailable'],
    ['anything unexpected', keysFailing(new TypeError('boom')), demoRequest(), 'InternalError'],
  ])('count exactly one outcome for %s', async (_label, keys, event, metric) => {
    const { handle, counted } = handlerWith({ keys });

    await handle(event);

    expect(counted).toEqual([metric]);
  });

  it('count StaleKeysServed for each request answered from keys past their TTL, and log it', async () => {
    const { handle, logs, counted } = handlerWith({
      keys: keysOf(parseKeyring(SECRET_STRING).keyring, true),
    });

    await handle(demoRequest());
    await handle(paymentEvent(credentials('demo', PARTNER_KEY)));

    expect(counted).toEqual(['StaleKeysServed', 'Accepted', 'StaleKeysServed', 'Unauthorized']);
    expect(logs.entries().map((entry) => entry.staleKeys)).toEqual([true, true]);
  });

  it('log the app id of a refused request only when it names a real app, with the same fields in the same order for a wrong key and an unknown app', async () => {
    const { handle, logs } = handlerWith();

    await handle(paymentEvent(credentials('demo', PARTNER_KEY)));
    await handle(paymentEvent(credentials(PARTNER_KEY, DEMO_KEY)));
    await handle(paymentEvent(credentials('nobody', DEMO_KEY)));

    expect(logs.entries().map((entry) => [entry.reason, entry.appId])).toEqual([
      ['wrong_key', 'demo'],
      ['unknown_app', null],
      ['unknown_app', null],
    ]);
    expect(logs.lines.join('\n')).not.toContain(PARTNER_KEY);
    const [wrongKey, , unknownApp] = logs.entries().map((entry) => Object.keys(entry));
    expect(wrongKey).toEqual(unknownApp);
    expect(wrongKey).toEqual(expect.arrayContaining(['appId', 'keyId', 'reason']));
  });
});

describe('keys that expire and apps fenced to their networks', () => {
  const NOW = Date.parse('2026-11-21T12:00:00Z');
  /**
   * demo: its first key expires at NOW; partner: two networks. The address rules themselves (IPv4-mapped and IPv6
   * forms, an empty allowlist) are SourceAllowlist's and authenticate's (network.test.ts, authenticate.test.ts): here,
   * that the handler applies them to the request's source and answers as for any refusal.
   */
  const RULES_SECRET = JSON.stringify({
    demo: [{ key: DEMO_KEY, expires: '2026-11-21T12:00:00Z' }, DEMO_NEXT_KEY],
    partner: { keys: [PARTNER_KEY], allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] },
  });
  const keyring = parseKeyring(RULES_SECRET).keyring;
  const handlerAt = () => handlerWith({ keys: keysOf(keyring), now: () => NOW });

  /** A request with these credentials from `sourceIp`; undefined: an event whose identity has no address. */
  function from(sourceIp: string | undefined, appId: string, appKey: string): unknown {
    const event = paymentEvent(credentials(appId, appKey));
    const identity: Record<string, unknown> = { ...event.requestContext.identity, sourceIp };
    return { ...event, requestContext: { ...event.requestContext, identity } };
  }

  /** Any other refusal, for comparison: what every 401 must look like. */
  async function wrongKeyAnswer(): Promise<APIGatewayProxyResult> {
    return handlerAt().handle(from('203.0.113.10', 'demo', PARTNER_KEY));
  }

  it.each<[string, string | undefined, string, string, string, string]>([
    ['a key whose expiry is now', '203.0.113.10', 'demo', DEMO_KEY, 'expired_key', 'ExpiredKey'],
    [
      'a key sent from outside the app’s networks',
      '198.51.100.7',
      'partner',
      PARTNER_KEY,
      'source_not_allowed',
      'SourceNotAllowed',
    ],
    [
      'a key sent with no known source address',
      undefined,
      'partner',
      PARTNER_KEY,
      'source_not_allowed',
      'SourceNotAllowed',
    ],
  ])(
    'answer %s with the same 401 as any refusal, log the reason with the app and key id, and count it under its own metric beside Unauthorized',
    async (_label, sourceIp, appId, appKey, reason, metric) => {
      const { handle, logs, counted } = handlerAt();

      const result = await handle(from(sourceIp, appId, appKey));

      expect(result).toEqual(await wrongKeyAnswer());
      expect(result.statusCode).toBe(401);
      expect(logs.entries()).toEqual([
        expect.objectContaining({
          message: 'request refused',
          status: 401,
          reason,
          appId,
          keyId: expect.stringMatching(/^[0-9a-f]{12}$/) as unknown,
        }),
      ]);
      expect(logs.lines.join('\n')).not.toContain(appKey);
      expect(counted).toEqual([metric, 'Unauthorized']);
    },
  );

  it('refuse a key at the clock of each request: one that expires between two requests, with no refresh between them', async () => {
    // Arrange: one keyring, loaded once; only the clock moves.
    let clock = NOW - 1;
    const served: unknown[] = [];
    const getKeys = () => {
      served.push(keyring);
      return Promise.resolve({ keyring, stale: false });
    };
    const { handle, logs } = handlerWith({ keys: { getKeys }, now: () => clock });

    // Act
    const before = await handle(from('203.0.113.10', 'demo', DEMO_KEY));
    clock = NOW;
    const after = await handle(from('203.0.113.10', 'demo', DEMO_KEY));

    // Assert
    expect([before.statusCode, after.statusCode]).toEqual([200, 401]);
    expect(served).toEqual([keyring, keyring]);
    expect(logs.entries().map((entry) => entry.reason)).toEqual([undefined, 'expired_key']);
  });

  it('give nothing away to a wrong key from a network not allowed: it is a wrong key', async () => {
    const { handle, logs } = handlerAt();

    const result = await handle(from('198.51.100.7', 'partner', DEMO_KEY));

    expect(result).toEqual(await wrongKeyAnswer());
    expect(logs.entries().map((entry) => [entry.reason, entry.keyId])).toEqual([['wrong_key', null]]);
  });
});
