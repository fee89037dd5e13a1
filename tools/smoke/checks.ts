import {
  ERROR_RESPONSES,
  METHOD_NOT_ALLOWED_HEADERS,
  SUCCESS_BODY,
  UNAUTHORIZED_HEADERS,
} from '../../shared/api/responses';
import { siblingUrl } from './payment-url';

/** One HTTP request, exactly as it goes on the wire. */
export interface SmokeRequest {
  readonly method: string;
  readonly url: URL;
  /** Name/value pairs in order. A name listed twice goes out as two header lines. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: string;
}

/** What every answer to a check must be, beyond what every answer must be (JSON, Cache-Control: no-store). */
export interface Expectation {
  readonly status: number;
  /** The body's `code`. */
  readonly code: string;
  /** Headers that must be present with exactly this value. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Headers that must be present, with any value. */
  readonly present?: readonly string[];
}

export type RequestCheckId =
  | 'accepted'
  | 'wrong-key'
  | 'unknown-app'
  | 'missing-app-key'
  | 'missing-app-id'
  | 'duplicate-app-key'
  | 'wrong-media-type'
  | 'invalid-json'
  | 'method-get'
  | 'method-delete'
  | 'other-path';

export interface RequestCheck {
  readonly kind: 'request';
  readonly id: RequestCheckId;
  /** The row's name in the report. */
  readonly title: string;
  readonly request: SmokeRequest;
  readonly expect: Expectation;
}

/** A check that sends nothing: it compares the answers of other checks. */
export interface UniformityCheck {
  readonly kind: 'uniform';
  readonly id: 'same-401';
  readonly title: string;
  /** These checks' answers must carry one identical body and WWW-Authenticate. */
  readonly of: readonly RequestCheckId[];
}

export type Check = RequestCheck | UniformityCheck;
export type CheckId = Check['id'];

export interface CheckInputs {
  readonly url: URL;
  readonly appId: string;
  readonly appKey: string;
  /** A key that cannot be right: a fresh random one. */
  readonly wrongKey: string;
  /** An App-id of the allowed form that no secret holds: a fresh random one. */
  readonly unknownAppId: string;
}

/** Identifies smoke traffic to whoever reads the server's logs. */
export const SMOKE_USER_AGENT = 'payment-api-smoke-test';

/** A small JSON body: the 200 check shows that a body is accepted, not only an empty one. */
export const SMOKE_BODY = '{"smokeTest":true}';

/** Cut short on purpose: not JSON. */
export const INVALID_JSON_BODY = '{"smokeTest":';

const JSON_MEDIA_TYPE = 'application/json';

const UNAUTHORIZED: Expectation = {
  status: ERROR_RESPONSES.unauthorized.statusCode,
  code: ERROR_RESPONSES.unauthorized.code,
  present: Object.keys(UNAUTHORIZED_HEADERS),
};

const METHOD_NOT_ALLOWED: Expectation = {
  status: ERROR_RESPONSES.methodNotAllowed.statusCode,
  code: ERROR_RESPONSES.methodNotAllowed.code,
  headers: METHOD_NOT_ALLOWED_HEADERS,
};

type Pairs = readonly (readonly [string, string])[];

/**
 * The checks in the order they run, one request each (plus one comparison). Pure: the random values come in
 * with `inputs`. The method and path checks carry the right key, so a 405 or 404 shows routing, not a refusal.
 */
export function buildChecks(inputs: CheckInputs): readonly Check[] {
  const { url, appId, appKey, wrongKey, unknownAppId } = inputs;
  const common: Pairs = [
    ['Accept', JSON_MEDIA_TYPE],
    ['User-Agent', SMOKE_USER_AGENT],
  ];
  const json: Pairs = [['Content-Type', JSON_MEDIA_TYPE]];
  const post = (headers: Pairs, body: string = SMOKE_BODY): SmokeRequest => ({
    method: 'POST',
    url,
    headers: [...common, ...headers],
    body,
  });
  const refused = (id: RequestCheckId, title: string, headers: Pairs): RequestCheck => ({
    kind: 'request',
    id,
    title,
    request: post(headers),
    expect: UNAUTHORIZED,
  });

  return [
    {
      kind: 'request',
      id: 'accepted',
      title: 'POST with the key',
      request: post([...json, ['App-id', appId], ['App-key', appKey]]),
      expect: { status: 200, code: SUCCESS_BODY.code },
    },
    refused('wrong-key', 'wrong App-key', [...json, ['App-id', appId], ['App-key', wrongKey]]),
    refused('unknown-app', 'unknown App-id', [...json, ['App-id', unknownAppId], ['App-key', appKey]]),
    refused('missing-app-key', 'no App-key header', [...json, ['App-id', appId]]),
    refused('missing-app-id', 'no App-id header', [...json, ['App-key', appKey]]),
    refused('duplicate-app-key', 'App-key sent twice', [
      ...json,
      ['App-id', appId],
      ['App-key', appKey],
      ['App-key', appKey],
    ]),
    {
      kind: 'uniform',
      id: 'same-401',
      title: 'every 401 identical',
      of: ['wrong-key', 'unknown-app', 'missing-app-key', 'missing-app-id', 'duplicate-app-key'],
    },
    {
      kind: 'request',
      id: 'wrong-media-type',
      title: 'Content-Type: text/plain',
      request: post([
        ['Content-Type', 'text/plain'],
        ['App-id', appId],
        ['App-key', appKey],
      ]),
      expect: {
        status: ERROR_RESPONSES.unsupportedMediaType.statusCode,
        code: ERROR_RESPONSES.unsupportedMediaType.code,
      },
    },
    {
      kind: 'request',
      id: 'invalid-json',
      title: 'body not JSON',
      request: post([...json, ['App-id', appId], ['App-key', appKey]], INVALID_JSON_BODY),
      expect: { status: ERROR_RESPONSES.badRequest.statusCode, code: ERROR_RESPONSES.badRequest.code },
    },
    ...(['GET', 'DELETE'] as const).map((method): RequestCheck => ({
      kind: 'request',
      id: method === 'GET' ? 'method-get' : 'method-delete',
      title: `${method} instead of POST`,
      request: { method, url, headers: [...common, ['App-id', appId], ['App-key', appKey]] },
      expect: METHOD_NOT_ALLOWED,
    })),
    {
      kind: 'request',
      id: 'other-path',
      title: 'POST to another path',
      request: { ...post([...json, ['App-id', appId], ['App-key', appKey]]), url: siblingUrl(url) },
      expect: { status: ERROR_RESPONSES.notFound.statusCode, code: ERROR_RESPONSES.notFound.code },
    },
  ];
}

export function requestChecks(checks: readonly Check[]): RequestCheck[] {
  return checks.filter((check): check is RequestCheck => check.kind === 'request');
}
