import { PAYMENT_ROUTE } from '../../shared/api/route';

export type PaymentUrlReading =
  { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly problem: string };

/** Hosts a key may reach over plain HTTP: this machine only (the local server). */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Reads the URL of `POST /payment` as the stack outputs it (`https://<id>.execute-api.<region>.amazonaws.com/
 * <stage>/payment`), as a custom domain maps it (`https://api.example.com/payment`) or as the local server
 * serves it (`http://127.0.0.1:3000/payment`). Problems never quote the text: a key pasted in the wrong place
 * must not be printed back.
 */
export function readPaymentUrl(text: string): PaymentUrlReading {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, problem: 'is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, problem: 'must start with https://' };
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return {
      ok: false,
      problem:
        'must use https:// (http:// only for 127.0.0.1, ::1 or localhost): the key would cross the network in clear text',
    };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, problem: 'must not hold a user name or password' };
  }
  if (url.search !== '' || url.hash !== '') {
    return { ok: false, problem: 'must have no query string or fragment' };
  }
  if (!url.pathname.endsWith(PAYMENT_ROUTE.path)) {
    return {
      ok: false,
      problem: `must be the URL of ${PAYMENT_ROUTE.path}: its path must end in ${PAYMENT_ROUTE.path}`,
    };
  }
  return { ok: true, url };
}

/** A path of the same API that no resource serves: the payment URL with its last segment replaced. */
export const NOT_A_PATH_SEGMENT = 'smoke-test-not-a-path';

export function siblingUrl(paymentUrl: URL, segment: string = NOT_A_PATH_SEGMENT): URL {
  const sibling = new URL(paymentUrl.href);
  sibling.pathname = paymentUrl.pathname.replace(/[^/]*$/, segment);
  return sibling;
}
