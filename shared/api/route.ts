/** The API's one resource and the one method it accepts: the stack builds it, the local server routes by it. */
export const PAYMENT_ROUTE = { path: '/payment', method: 'POST' } as const;

/** The API Gateway stage, the URL's first path segment, unless the stack is given another (openapi.yaml's default). */
export const DEFAULT_STAGE_NAME = 'prod';
