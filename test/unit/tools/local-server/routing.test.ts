import { loggedPath, routeRequest } from '../../../../tools/local-server/routing';

describe('routeRequest', () => {
  it.each(['/payment', '/payment/'])('sends POST %s to the handler as the /payment resource', (path) => {
    // Act / Assert
    expect(routeRequest('POST', path)).toEqual({ kind: 'handler', resource: '/payment' });
  });

  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])(
    'refuses %s /payment with 405 and Allow: POST',
    (method) => {
      // Act / Assert
      expect(routeRequest(method, '/payment')).toEqual({
        kind: 'gateway',
        error: 'methodNotAllowed',
        reason: 'method_not_allowed',
        headers: { Allow: 'POST' },
      });
    },
  );

  it.each(['/', '/other', '/Payment', '/payment//', '/payment/x', '/paymentx', '/x/../payment', '*', ''])(
    'answers 404 for %j whatever the method',
    (path) => {
      // Act / Assert
      expect([routeRequest('POST', path), routeRequest('GET', path)]).toEqual(
        Array(2).fill({ kind: 'gateway', error: 'notFound', reason: 'unknown_path', headers: {} }),
      );
    },
  );
});

describe('loggedPath', () => {
  it.each(['/payment', '/payment/'])('names the route for %s', (path) => {
    expect(loggedPath(path)).toEqual({ route: '/payment' });
  });

  it.each<[string, number, number]>([
    ['/', 1, 1],
    [`/payk_${'A'.repeat(43)}`, 49, 1],
    ['/prod/payment/x', 15, 3],
    ['', 0, 0],
  ])('gives only the length and segment count of %j, never its text', (path, pathLength, pathSegments) => {
    expect(loggedPath(path)).toEqual({ pathLength, pathSegments });
  });
});
