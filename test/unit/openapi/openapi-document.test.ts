/**
 * openapi.yaml is written by hand for readability; these tests hold it to the tables the code answers from
 * (ERROR_RESPONSES, SUCCESS_BODY, the headers, the route), so the two cannot drift. The real OpenAPI validator runs
 * in test/integration/openapi (it needs a Node process of its own).
 */
import { DEFAULT_PORT } from '../../../tools/local-server/local-settings';
import {
  COMMON_HEADERS,
  ERROR_RESPONSES,
  METHOD_NOT_ALLOWED_HEADERS,
  SUCCESS_BODY,
  UNAUTHORIZED_HEADERS,
} from '../../../shared/api/responses';
import { DEFAULT_STAGE_NAME, PAYMENT_ROUTE } from '../../../shared/api/route';
import { BODY_LIMITS } from '../../../shared/api/body-limits';
import {
  limitedHeaders,
  RATE_LIMIT_POLICY_NAME,
  rateLimitHeaders,
} from '../../../lambda/payment/rate-limit/headers';
import {
  allRefs,
  loadOpenApiDocument,
  pointer,
  resolve,
  type OpenApiDocument,
  type ResponseObject,
} from '../../support/openapi-document';

const document = loadOpenApiDocument();
const paymentPath = document.paths[PAYMENT_ROUTE.path] ?? {};
const post = paymentPath[PAYMENT_ROUTE.method.toLowerCase()];

/** The response a caller gets for this status: POST's own, or the components for 404 and 405. */
function documentedResponse(statusCode: number): ResponseObject {
  const { responses } = document.components;
  const response =
    statusCode === 404
      ? responses.NotFound
      : statusCode === 405
        ? responses.MethodNotAllowed
        : post?.responses[String(statusCode)];
  if (response === undefined) throw new Error(`status ${statusCode} is not documented`);
  return resolve(document, response);
}

function jsonContent(response: ResponseObject) {
  const content = response.content?.[COMMON_HEADERS['Content-Type']];
  if (content === undefined)
    throw new Error(`${response.description}: no ${COMMON_HEADERS['Content-Type']} content`);
  return content;
}

/** The codes a response's schema allows: the `const` or `enum` of `code` in its allOf. */
function allowedCodes(response: ResponseObject): string[] {
  const schema = resolve(document, jsonContent(response).schema ?? {}) as {
    allOf?: { properties?: { code?: { const?: string; enum?: string[] } } }[];
  };
  const code = schema.allOf?.find((part) => part.properties?.code !== undefined)?.properties?.code;
  return code?.enum ?? (code?.const === undefined ? [] : [code.const]);
}

function exampleValues(response: ResponseObject): unknown[] {
  return Object.values(jsonContent(response).examples ?? {}).map((example) => example.value);
}

function headerOf(response: ResponseObject, name: string) {
  const header = response.headers?.[name];
  return header === undefined ? undefined : resolve(document, header);
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Every response object of the document, resolved, with where it is used. */
function everyResponse(doc: OpenApiDocument): [string, ResponseObject][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .flatMap(([method, operation]) =>
        Object.entries(operation.responses).map(([status, response]): [string, ResponseObject] => [
          `${method} ${path} ${status}`,
          resolve(doc, response),
        ]),
      ),
  );
}

describe('openapi.yaml', () => {
  it('has no $ref that names nothing', () => {
    const refs = allRefs(document);

    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect(() => pointer(document, ref)).not.toThrow();
  });

  it('describes POST /payment, the route the stack builds and the local server serves', () => {
    expect(Object.keys(document.paths)).toEqual([PAYMENT_ROUTE.path, '/{otherPath}']);
    expect(post?.operationId).toBe('submitPayment');
  });

  it('describes every other path as operations answering 404 only, needing no credentials, so generators test it', () => {
    const otherPath = document.paths['/{otherPath}'] ?? {};
    const operations = Object.entries(otherPath).filter(([method]) => HTTP_METHODS.has(method));

    expect(operations.map(([method]) => method).sort()).toEqual(['get', 'post']);
    for (const [, operation] of operations) {
      expect(operation.security).toEqual([]);
      expect(Object.keys(operation.responses)).toEqual(['404']);
      expect(resolve(document, operation.responses['404'] ?? {})).toBe(
        document.components.responses.NotFound,
      );
    }
  });

  it('states the body limits the function applies, in bytes and in depth', () => {
    expect(document.info.description).toContain(`${BODY_LIMITS.maxBytes.toLocaleString('en')} bytes`);
    expect(document.info.description).toMatch(new RegExp(`nested\\s+at most ${BODY_LIMITS.maxDepth} deep`));
    expect(documentedResponse(413).description).toContain(
      `${BODY_LIMITS.maxBytes.toLocaleString('en')} bytes`,
    );
  });

  it('bounds every string it describes: a maxLength, a const or an enum', () => {
    const unbounded: string[] = [];
    const visit = (value: unknown, where: string): void => {
      if (typeof value !== 'object' || value === null) return;
      const schema = value as Record<string, unknown>;
      if (schema.type === 'string' && !('maxLength' in schema || 'const' in schema || 'enum' in schema)) {
        unbounded.push(where);
      }
      for (const [key, child] of Object.entries(schema)) visit(child, `${where}/${key}`);
    };

    visit(document, '#');

    expect(unbounded).toEqual([]);
  });

  it('asks for App-id and App-key as API-key headers, both in one requirement', () => {
    expect(document.components.securitySchemes).toEqual({
      AppId: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'App-id' }) as unknown,
      AppKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'App-key' }) as unknown,
    });
    expect(document.security).toEqual([{ AppId: [], AppKey: [] }]);
    expect(post?.security).toBeUndefined();
  });

  it('documents every other method on /payment as 405 needing no credentials', () => {
    const others = Object.entries(paymentPath).filter(
      ([method]) => method !== PAYMENT_ROUTE.method.toLowerCase(),
    );

    expect(others.map(([method]) => method).sort()).toEqual(['delete', 'get', 'options', 'patch', 'put']);
    for (const [, operation] of others) {
      expect(operation.security).toEqual([]);
      expect(Object.keys(operation.responses)).toEqual(['405']);
      expect(resolve(document, operation.responses['405'] ?? {})).toBe(
        document.components.responses.MethodNotAllowed,
      );
    }
  });

  it('lists the servers: the deployed URL with its region and stage, a custom domain, the local server', () => {
    const [deployed, custom, local] = document.servers;

    expect(deployed?.url).toBe('https://{apiId}.execute-api.{region}.amazonaws.com/{stage}');
    expect(deployed?.variables?.stage?.default).toBe(DEFAULT_STAGE_NAME);
    expect(custom?.url).toBe('https://{domain}');
    expect(local?.url).toBe('http://127.0.0.1:{port}');
    expect(local?.variables?.port?.default).toBe(String(DEFAULT_PORT));
  });

  it('documents 200 with the success body, its code fixed', () => {
    const accepted = documentedResponse(200);

    expect(allowedCodes(accepted)).toEqual([SUCCESS_BODY.code]);
    expect(exampleValues(accepted)).toEqual([SUCCESS_BODY]);
  });

  it.each(Object.entries(ERROR_RESPONSES))(
    'documents %s: its status, its code among the allowed ones, its exact message in an example',
    (_name, { statusCode, code, message }) => {
      const response = documentedResponse(statusCode);

      expect(allowedCodes(response)).toContain(code);
      expect(exampleValues(response)).toContainEqual({ code, message });
    },
  );

  it('allows no code and shows no example the service does not answer with', () => {
    const byCode = new Map<string, { message: string }>([
      [SUCCESS_BODY.code, SUCCESS_BODY],
      ...Object.values(ERROR_RESPONSES).map((entry) => [entry.code, entry] as const),
    ]);
    const statuses = new Map<string, Set<string>>();
    for (const entry of Object.values(ERROR_RESPONSES)) {
      statuses.set(entry.code, (statuses.get(entry.code) ?? new Set()).add(String(entry.statusCode)));
    }

    for (const [where, response] of everyResponse(document)) {
      const status = where.split(' ').at(-1) ?? '';
      for (const code of allowedCodes(response)) {
        expect([where, byCode.has(code)]).toEqual([where, true]);
        // API Gateway's catch-alls keep their own status: client_error on any 4xx, internal_error on any 5xx.
        const catchAll =
          (code === 'client_error' && status.startsWith('4')) ||
          (code === 'internal_error' && status.startsWith('5'));
        if (!catchAll && code !== SUCCESS_BODY.code)
          expect([where, code, statuses.get(code)?.has(status)]).toEqual([where, code, true]);
      }
      for (const value of exampleValues(response)) {
        const { code, message } = value as { code: string; message: string };
        expect([where, message]).toEqual([where, byCode.get(code)?.message]);
      }
    }
  });

  it.each([200, 400, 401, 403, 404, 405, 413, 415, 429, 500, 502, 503, 504])(
    'documents the headers of %i: JSON, Cache-Control: no-store and nosniff, required',
    (statusCode) => {
      const response = documentedResponse(statusCode);

      expect(Object.keys(response.content ?? {})).toEqual([COMMON_HEADERS['Content-Type']]);
      for (const name of ['Cache-Control', 'X-Content-Type-Options'] as const) {
        expect([name, headerOf(response, name)]).toEqual([
          name,
          expect.objectContaining({
            required: true,
            schema: { type: 'string', const: COMMON_HEADERS[name] },
          }) as unknown,
        ]);
      }
    },
  );

  it('documents WWW-Authenticate on 401 and Allow on 405, required, with their exact values', () => {
    expect(headerOf(documentedResponse(401), 'WWW-Authenticate')).toEqual(
      expect.objectContaining({
        required: true,
        schema: { type: 'string', const: UNAUTHORIZED_HEADERS['WWW-Authenticate'] },
      }),
    );
    expect(headerOf(documentedResponse(405), 'Allow')).toEqual(
      expect.objectContaining({
        required: true,
        schema: { type: 'string', const: METHOD_NOT_ALLOWED_HEADERS.Allow },
      }),
    );
  });

  it('documents X-Request-Id: always on 200 and 401 (only the function answers them), optional elsewhere', () => {
    expect(headerOf(documentedResponse(200), 'X-Request-Id')?.required).toBe(true);
    expect(headerOf(documentedResponse(401), 'X-Request-Id')?.required).toBe(true);
    for (const statusCode of [400, 404, 405, 413, 415, 429, 500, 502, 503]) {
      expect([statusCode, headerOf(documentedResponse(statusCode), 'X-Request-Id')?.required]).toEqual([
        statusCode,
        false,
      ]);
    }
  });

  describe('per-app rate limits', () => {
    /** Limits whose policy is written in each way: a whole rate, a fraction, one request per 1,000 s. */
    const LIMITS = [
      { perSecond: 20, burst: 40 },
      { perSecond: 0.5, burst: 1 },
      { perSecond: 0.001, burst: 1 },
      { perSecond: 10_000, burst: 100_000 },
    ];

    function patternOf(statusCode: number, name: string): RegExp {
      const pattern = headerOf(documentedResponse(statusCode), name)?.schema?.pattern;
      if (typeof pattern !== 'string') throw new Error(`${name} on ${statusCode} has no pattern`);
      return new RegExp(pattern);
    }

    it("documents one body for a 429, whether the stage's throttle or the app's own limit sent it", () => {
      expect(allowedCodes(documentedResponse(429))).toEqual([ERROR_RESPONSES.tooManyRequests.code]);
    });

    it("documents a 429's headers as the limiter sends them, optional since the stage's 429 has none", () => {
      const sent = LIMITS.map((limit) => limitedHeaders(limit, 7));

      for (const headers of sent) {
        expect(Object.keys(headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
        for (const [name, value] of Object.entries(headers)) {
          expect([name, headerOf(documentedResponse(429), name)?.required]).toEqual([name, false]);
          expect([name, value]).toEqual([name, expect.stringMatching(patternOf(429, name))]);
        }
      }
    });

    it.each([200, 400, 413, 415])(
      'documents RateLimit-Policy and RateLimit on %i as optional, matching what the limiter sends',
      (statusCode) => {
        for (const limit of LIMITS) {
          for (const [name, value] of Object.entries(rateLimitHeaders(limit, 3, 1))) {
            expect([name, headerOf(documentedResponse(statusCode), name)?.required]).toEqual([name, false]);
            expect([name, value]).toEqual([name, expect.stringMatching(patternOf(statusCode, name))]);
          }
        }
      },
    );

    it('documents no rate limit field on a 401: a request without valid credentials is never counted', () => {
      for (const name of ['Retry-After', 'RateLimit-Policy', 'RateLimit']) {
        expect([name, headerOf(documentedResponse(401), name)]).toEqual([name, undefined]);
      }
    });

    it("names the code's policy and the draft the fields follow", () => {
      for (const name of ['RateLimit-Policy', 'RateLimit']) {
        expect(patternOf(429, name).source).toContain(`^"${RATE_LIMIT_POLICY_NAME}";`);
        expect(headerOf(documentedResponse(429), name)?.description).toContain(
          'draft-ietf-httpapi-ratelimit-headers-11',
        );
      }
    });

    it('would refuse a policy or a retry the limiter never sends', () => {
      expect('"app";q=0;w=1').not.toMatch(patternOf(429, 'RateLimit-Policy'));
      expect('"app";q=0.5;w=1').not.toMatch(patternOf(429, 'RateLimit-Policy'));
      expect('"other";r=0;t=1').not.toMatch(patternOf(429, 'RateLimit'));
      expect('0').not.toMatch(patternOf(429, 'Retry-After'));
    });
  });
});
