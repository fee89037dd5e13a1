import {
  buildChecks,
  INVALID_JSON_BODY,
  requestChecks,
  type RequestCheck,
} from '../../../../tools/smoke/checks';

const INPUTS = {
  url: new URL('https://abcde12345.execute-api.eu-west-1.amazonaws.com/prod/payment'),
  appId: 'demo',
  appKey: 'test-smoke-key-0123456789abcdef',
  wrongKey: 'payk_wrongwrongwrongwrongwrongwrongwrongwrongwro',
  unknownAppId: 'smoke-test-unknown-0123456789ab',
};

const checks = buildChecks(INPUTS);

function check(id: RequestCheck['id']): RequestCheck {
  const found = requestChecks(checks).find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no check ${id}`);
  return found;
}

function valuesOf(found: RequestCheck, name: string): string[] {
  return found.request.headers.filter(([header]) => header === name).map(([, value]) => value);
}

describe('buildChecks', () => {
  it('sends eleven requests and compares the 401s once: a few dozen at most', () => {
    expect(requestChecks(checks)).toHaveLength(11);
    expect(checks.filter((candidate) => candidate.kind === 'uniform')).toHaveLength(1);
    expect(new Set(checks.map((candidate) => candidate.id)).size).toBe(checks.length);
  });

  it('sends the key with JSON for the 200 check', () => {
    const accepted = check('accepted');

    expect(accepted.request.method).toBe('POST');
    expect(accepted.request.url.href).toBe(INPUTS.url.href);
    expect(valuesOf(accepted, 'Content-Type')).toEqual(['application/json']);
    expect(valuesOf(accepted, 'App-id')).toEqual(['demo']);
    expect(valuesOf(accepted, 'App-key')).toEqual([INPUTS.appKey]);
    expect(JSON.parse(accepted.request.body ?? '')).toEqual({ smokeTest: true });
    expect(accepted.expect).toEqual({ status: 200, code: 'ok' });
  });

  it.each<[RequestCheck['id'], string[], string[]]>([
    ['wrong-key', ['demo'], [INPUTS.wrongKey]],
    ['unknown-app', [INPUTS.unknownAppId], [INPUTS.appKey]],
    ['missing-app-key', ['demo'], []],
    ['missing-app-id', [], [INPUTS.appKey]],
    ['duplicate-app-key', ['demo'], [INPUTS.appKey, INPUTS.appKey]],
  ])('%s: App-id %j, App-key sent as %j, expecting the uniform 401', (id, appIds, appKeys) => {
    const refused = check(id);

    expect(valuesOf(refused, 'App-id')).toEqual(appIds);
    expect(valuesOf(refused, 'App-key')).toEqual(appKeys);
    expect(valuesOf(refused, 'Content-Type')).toEqual(['application/json']);
    expect(refused.expect).toEqual({ status: 401, code: 'unauthorized', present: ['WWW-Authenticate'] });
  });

  it('sends text/plain and then broken JSON with the right key', () => {
    expect(valuesOf(check('wrong-media-type'), 'Content-Type')).toEqual(['text/plain']);
    expect(valuesOf(check('wrong-media-type'), 'App-key')).toEqual([INPUTS.appKey]);
    expect(check('wrong-media-type').expect).toEqual({ status: 415, code: 'unsupported_media_type' });

    expect(check('invalid-json').request.body).toBe(INVALID_JSON_BODY);
    expect(() => JSON.parse(INVALID_JSON_BODY) as unknown).toThrow();
    expect(valuesOf(check('invalid-json'), 'App-key')).toEqual([INPUTS.appKey]);
    expect(check('invalid-json').expect).toEqual({ status: 400, code: 'bad_request' });
  });

  it('tries GET and DELETE with the key, expecting 405 and Allow: POST', () => {
    for (const id of ['method-get', 'method-delete'] as const) {
      expect(check(id).request.body).toBeUndefined();
      expect(valuesOf(check(id), 'App-key')).toEqual([INPUTS.appKey]);
      expect(check(id).expect).toEqual({
        status: 405,
        code: 'method_not_allowed',
        headers: { Allow: 'POST' },
      });
    }
    expect([check('method-get').request.method, check('method-delete').request.method]).toEqual([
      'GET',
      'DELETE',
    ]);
  });

  it('posts to a sibling path of the same stage, expecting 404', () => {
    const otherPath = check('other-path');

    expect(otherPath.request.url.href).toBe(
      'https://abcde12345.execute-api.eu-west-1.amazonaws.com/prod/smoke-test-not-a-path',
    );
    expect(otherPath.expect).toEqual({ status: 404, code: 'not_found' });
  });

  it('asks for JSON and names itself on every request', () => {
    for (const request of requestChecks(checks).map((candidate) => candidate.request)) {
      expect(request.headers).toContainEqual(['Accept', 'application/json']);
      expect(request.headers).toContainEqual(['User-Agent', 'payment-api-smoke-test']);
    }
  });
});
