/**
 * The one vocabulary of the payment Lambda's and the local server's log lines: every field either may write, each
 * with one name for one thing (API Gateway's request id is `apiRequestId` on every line, the access log's included).
 * docs/operations.md describes them; a test reads every line the contract suite makes both write and checks each
 * field against this list, so a second name for a thing cannot creep in unnoticed.
 */
export const LOG_FIELDS = {
  level: 'debug, info, warn or error',
  timestamp: 'when the line was written (ISO 8601, UTC)',
  message: 'what happened, in fixed words: "request accepted", "request refused", "keys loaded", ...',
  service: 'the stack name (Lambda only)',
  function_request_id: 'the Lambda request id (Lambda only)',
  cold_start: "whether this is the execution environment's first invocation (Lambda only)",
  apiRequestId: "API Gateway's request id, also the answer's X-Request-Id",
  status: 'the HTTP status of the answer',
  reason: 'why a request was refused, one name per cause',
  sourceIp: "the caller's address as API Gateway saw it",
  appId: 'the app, on lines of a request whose App-id names a real one; null when it names none',
  keyId: 'the 12-hex fingerprint of the key that matched; null when none did',
  staleKeys: 'true when the request was judged against keys past their cache TTL',
  retryAfterSeconds: 'on a 429, the Retry-After it carries',
  failure: "the rate limiter's failure mode when it could not answer: local, open or closed",
  error: 'an error by its name and message, never a stack trace or a secret',
  method: 'the HTTP method, on the lines the local server writes for what API Gateway answers itself',
  route: 'the route a request was refused on, when the path is one the API serves',
  pathLength: "another path's length (its text is never logged: a caller may put a key in it)",
  pathSegments: "another path's number of segments",
  source: 'where keys were read from: a secret ARN or a file path, never its content',
  shard: 'which shard of the key registry a key cache line is about (only with several shards)',
  apps: 'how many apps the keys hold (or hold a rate limit of their own, on the warning that none is enforced)',
  entries:
    'with several shards, how many app entries a shard holds (each built when a request first needs it)',
  secretBytes: "the size of the keys' text, never the text",
  durationMs: 'how long reading the keys took',
  servingStaleKeys: 'after a failed read, whether keys past their TTL are still served',
  staleKeysAgeSeconds: 'after a failed read, how old the keys still served are',
  entryPosition: "a malformed entry's position in the secret (never its app id: it could be a key)",
  keyPosition: 'the position of the malformed key within its entry',
  problem:
    'why the AWS settings (region, credentials, endpoint) cannot be used, on the one line that says so at start',
} as const;

export type LogFieldName = keyof typeof LOG_FIELDS;

/** Whether a field name belongs to the vocabulary. */
export function isLogField(name: string): name is LogFieldName {
  return Object.hasOwn(LOG_FIELDS, name);
}
