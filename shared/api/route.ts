/** The API's one resource and the one method it accepts: the stack builds it, the local server routes by it. */
export const PAYMENT_ROUTE = { path: '/payment', method: 'POST' } as const;
