import { METHOD_NOT_ALLOWED_HEADERS, type ErrorName } from '../../shared/api/responses';

import { PAYMENT_ROUTE } from '../../shared/api/route';

export const PAYMENT_RESOURCE = PAYMENT_ROUTE.path;
export const PAYMENT_METHOD = PAYMENT_ROUTE.method;

export type Route =
  | { readonly kind: 'handler'; readonly resource: string }
  | {
      readonly kind: 'gateway';
      readonly error: Extract<ErrorName, 'notFound' | 'methodNotAllowed'>;
      /** For the log line: why API Gateway refuses it. */
      readonly reason: 'unknown_path' | 'method_not_allowed';
      readonly headers: Readonly<Record<string, string>>;
    };

function isPaymentPath(path: string): boolean {
  return path === PAYMENT_RESOURCE || path === `${PAYMENT_RESOURCE}/`;
}

/** What a log line may say of a request's path. */
export type LoggedPath =
  { readonly route: string } | { readonly pathLength: number; readonly pathSegments: number };

/**
 * The route for a path the API serves; for any other, its shape only (length, and segments counted by "/"),
 * never its text: a client may put anything in a path, a key included (`POST /<key>`).
 */
export function loggedPath(path: string): LoggedPath {
  if (isPaymentPath(path)) return { route: PAYMENT_RESOURCE };
  return { pathLength: path.length, pathSegments: path.split('/').length - 1 };
}

/**
 * Routes a request as the deployed REST API does: `/payment` with POST goes to the Lambda; another method on
 * `/payment` is refused with 405 and `Allow: POST`, any other path with 404 (API Gateway's own answers there,
 * shaped by the stack's gateway responses from the same ERROR_RESPONSES catalog).
 *
 * API Gateway REST routes `/payment/` to the `/payment` resource too (a resource path cannot end in `/`, and a
 * request with one trailing slash reaches the method), so a single trailing slash is accepted. Paths are
 * case-sensitive and compared as sent: `/Payment` and `/payment//` are 404.
 */
export function routeRequest(method: string, path: string): Route {
  if (!isPaymentPath(path)) {
    return { kind: 'gateway', error: 'notFound', reason: 'unknown_path', headers: {} };
  }
  if (method !== PAYMENT_METHOD) {
    return {
      kind: 'gateway',
      error: 'methodNotAllowed',
      reason: 'method_not_allowed',
      headers: METHOD_NOT_ALLOWED_HEADERS,
    };
  }
  return { kind: 'handler', resource: PAYMENT_RESOURCE };
}
