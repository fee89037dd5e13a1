/**
 * Stands in for `@smithy/core/event-streams` in the SDK-based Lambda bundles, the rotation function's and the registry
 * monitor's (an esbuild alias: lib/bundled-function.ts). The SDK's HTTP protocols import it, lazily, only to read or
 * write an event stream, and no operation these Lambdas call has one (GetSecretValue, PutSecretValue,
 * UpdateSecretVersionStage, BatchGetSecretValue...). It is 15 KB of each bundle: this says so instead, should an
 * operation with an event stream ever be called.
 */
function notBundled(): never {
  throw new Error('event streams are not part of this bundle (lambda/no-event-streams.ts)');
}

/** What the SDK builds to read or write an event stream: each of its operations says the codec is not here. */
export class EventStreamSerde {
  serializeEventStream(): never {
    return notBundled();
  }

  deserializeEventStream(): never {
    return notBundled();
  }
}

export const eventStreamSerdeProvider = notBundled;
