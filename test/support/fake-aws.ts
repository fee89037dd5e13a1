/**
 * An AWS JSON service in memory, behind the small client's transport seam (shared/aws/http-transport.ts), for unit
 * tests of the code that calls it: each operation answers as scripted (a JSON output, an AWS error answer, a network
 * error, or a function of the input), and every call's input is recorded. The client above it is the real one:
 * signing, the X-Amz-Target, the error parsing.
 */
import { AwsJsonClient, type AttemptBounds } from '../../shared/aws/aws-json-client';
import type { AwsJsonService } from '../../shared/aws/aws-environment';
import { abortedAttempt } from '../../shared/aws/attempt-errors';
import type { TransportAnswer, HttpAttempt, HttpTransport } from '../../shared/aws/http-transport';

/** An error answer as the service writes it: a status, an AWS error type (`__type`) and a message. */
export interface AwsErrorAnswer {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

export function awsError(type: string, message: string, status = 400): AwsErrorAnswer {
  return { status, type, message };
}

/** What one call gets: a JSON output, an error answer, or a thrown network error. */
export type ScriptedOutcome = Record<string, unknown> | AwsErrorAnswer | Error;

type Behaviour = (input: Record<string, unknown>, attempt: HttpAttempt) => Promise<ScriptedOutcome>;

export interface OperationStub {
  resolves(output: Record<string, unknown>): OperationStub;
  rejects(error: AwsErrorAnswer | Error): OperationStub;
  callsFake(fake: Behaviour): OperationStub;
}

export interface FakeAwsService {
  readonly transport: HttpTransport;
  on(operation: string): OperationStub;
  /** The inputs of the calls of `operation` (each attempt), in order. */
  calls(operation: string): Record<string, unknown>[];
  /** Every attempt as sent: its headers and body. */
  readonly attempts: HttpAttempt[];
  reset(): void;
}

function isErrorAnswer(outcome: ScriptedOutcome): outcome is AwsErrorAnswer {
  return (
    !(outcome instanceof Error) && typeof outcome.status === 'number' && typeof outcome.type === 'string'
  );
}

function answerOf(outcome: AwsErrorAnswer | Record<string, unknown>, contentType: string): TransportAnswer {
  if (isErrorAnswer(outcome)) {
    return {
      status: outcome.status,
      headers: { 'content-type': contentType },
      body: JSON.stringify({ __type: outcome.type, message: outcome.message }),
    };
  }
  return { status: 200, headers: { 'content-type': contentType }, body: JSON.stringify(outcome) };
}

/** A fake service; an operation nobody scripted answers as the service does an unknown one (400). */
export function fakeAwsService(): FakeAwsService {
  const behaviours = new Map<string, Behaviour>();
  const calls: { operation: string; input: Record<string, unknown> }[] = [];
  const attempts: HttpAttempt[] = [];

  const transport: HttpTransport = async (attempt) => {
    attempts.push(attempt);
    const operation = (attempt.headers['X-Amz-Target'] ?? '').replace(/^[^.]*\./, '');
    const input = JSON.parse(attempt.body) as Record<string, unknown>;
    calls.push({ operation, input });
    const behaviour = behaviours.get(operation);
    // As the real transport does: the caller's signal ends the attempt, which was sent.
    const outcome = await new Promise<ScriptedOutcome>((resolve, reject) => {
      const onAbort = (): void => {
        reject(abortedAttempt(attempt.signal.reason, true));
      };
      if (attempt.signal.aborted) {
        onAbort();
        return;
      }
      attempt.signal.addEventListener('abort', onAbort, { once: true });
      const answered = behaviour
        ? behaviour(input, attempt)
        : Promise.resolve(awsError('UnknownOperationException', `${operation} is not scripted`));
      answered.then(resolve, reject).finally(() => {
        attempt.signal.removeEventListener('abort', onAbort);
      });
    });
    if (outcome instanceof Error) throw outcome;
    return answerOf(outcome, attempt.headers['Content-Type'] ?? 'application/x-amz-json-1.1');
  };

  return {
    transport,
    attempts,
    on(operation) {
      const stub: OperationStub = {
        resolves: (output) => stub.callsFake(() => Promise.resolve(output)),
        rejects: (error) => stub.callsFake(() => Promise.resolve(error)),
        callsFake: (fake) => {
          behaviours.set(operation, fake);
          return stub;
        },
      };
      return stub;
    },
    calls: (operation) => calls.filter((call) => call.operation === operation).map((call) => call.input),
    reset() {
      behaviours.clear();
      calls.length = 0;
      attempts.length = 0;
    },
  };
}

/** No timer of the client's own: a unit test of the caller's rules decides every time through the fake. */
export const UNBOUNDED_ONE_ATTEMPT: AttemptBounds = {
  maxAttempts: 1,
  connectionTimeoutMs: 3_600_000,
};

/** The test credentials the fakes are signed with. */
export const FAKE_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'fake-secret-access-key',
} as const;

/** The small client over a fake service, in eu-west-1. */
export function clientOver(
  fake: FakeAwsService,
  service: AwsJsonService,
  bounds: AttemptBounds = UNBOUNDED_ONE_ATTEMPT,
): AwsJsonClient {
  return new AwsJsonClient({
    service,
    bounds,
    target: {
      url: new URL(`https://${service.endpointPrefix}.eu-west-1.amazonaws.com/`),
      region: 'eu-west-1',
    },
    credentials: () => Promise.resolve(FAKE_CREDENTIALS),
    transport: fake.transport,
  });
}
