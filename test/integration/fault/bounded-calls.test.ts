/**
 * Every Secrets Manager client of the project ends its calls within the bounds stated in code, against a server
 * that accepts connections and never answers (and one that answers at a trickle): the payment Lambda's fetch (its
 * small client), the rotation Lambda's calls (the SDK), and the key CLI, whose error stays one line.
 */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import {
  createPaymentSecretsManagerClient,
  KEY_FETCH_ATTEMPTS,
  KEY_FETCH_BUDGET_MS,
  secretsManagerSource,
} from '../../../lambda/payment/secrets-manager-source';
import { createSecretsManagerClient, type CallBounds } from '../../../shared/aws/bounded-client';
import { ROTATION_CALL_BOUNDS } from '../../../lambda/rotation/settings';
import { OPERATOR_CALL_BOUNDS } from '../../../tools/common/aws-settings';
import { run } from '../../../tools/keys/main';
import { startStallingServer, type StallingServer } from '../../support/stalling-server';
import { motoAccess, motoClientConfig, MOTO_AWS_ENV } from '../../support/moto';

/** Timers, event loop and a busy 2-core machine: the slack allowed past a stated worst case. */
const SLACK_MS = 500;
const SECRET_ID = 'payment-api/keys';

/** The least time an SDK call takes when every attempt runs to its time-out. */
function allAttemptsMs(bounds: CallBounds): number {
  return bounds.maxAttempts * bounds.attemptTimeoutMs;
}

async function timed<T>(work: () => Promise<T>): Promise<{ outcome: PromiseSettledResult<T>; ms: number }> {
  const started = performance.now();
  const [outcome] = await Promise.allSettled([work()]);
  return { outcome, ms: performance.now() - started };
}

function rejectionName(outcome: PromiseSettledResult<unknown>): string | undefined {
  if (outcome.status === 'fulfilled') return undefined;
  const reason: unknown = outcome.reason;
  return reason instanceof Error ? reason.name : typeof reason;
}

describe('Secrets Manager calls are bounded', () => {
  const servers: StallingServer[] = [];
  let warn: jest.SpyInstance;
  let emitWarning: jest.SpyInstance;

  beforeEach(() => {
    warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    warn.mockRestore();
    emitWarning.mockRestore();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function stalling(stall: 'silent' | 'trickle'): Promise<StallingServer> {
    const server = await startStallingServer(stall);
    servers.push(server);
    return server;
  }

  it('the payment Lambda: one fetch from a silent server fails after 2 attempts of 600 ms, within 1.5 s', async () => {
    const server = await stalling('silent');
    const source = secretsManagerSource(
      SECRET_ID,
      createPaymentSecretsManagerClient(motoAccess(server.endpoint)),
    );

    const { outcome, ms } = await timed(() => source.fetchSecretString());

    expect(rejectionName(outcome)).toBe('TimeoutError');
    expect(server.connections()).toBe(KEY_FETCH_ATTEMPTS.maxAttempts);
    expect(ms).toBeGreaterThanOrEqual(
      KEY_FETCH_ATTEMPTS.maxAttempts * (KEY_FETCH_ATTEMPTS.socketTimeoutMs ?? KEY_FETCH_BUDGET_MS) - 50,
    );
    expect(ms).toBeLessThan(KEY_FETCH_BUDGET_MS + SLACK_MS);
    expect(warn).not.toHaveBeenCalled();
  });

  it("the payment Lambda: an answer that trickles in (never silent) ends at the fetch's budget", async () => {
    const server = await stalling('trickle');
    const source = secretsManagerSource(
      SECRET_ID,
      createPaymentSecretsManagerClient(motoAccess(server.endpoint)),
    );

    const { outcome, ms } = await timed(() => source.fetchSecretString());

    expect(rejectionName(outcome)).toBe('TimeoutError');
    expect(ms).toBeGreaterThanOrEqual(KEY_FETCH_BUDGET_MS - 50);
    expect(ms).toBeLessThan(KEY_FETCH_BUDGET_MS + SLACK_MS);
  });

  it('the rotation Lambda: a call to a silent server fails after 3 attempts of 2 s, within 8 s', async () => {
    const server = await stalling('silent');
    const client = createSecretsManagerClient(ROTATION_CALL_BOUNDS, motoClientConfig(server));

    const { outcome, ms } = await timed(() =>
      client.send(new GetSecretValueCommand({ SecretId: SECRET_ID, VersionStage: 'AWSCURRENT' })),
    );

    expect(rejectionName(outcome)).toBe('TimeoutError');
    expect(server.connections()).toBe(ROTATION_CALL_BOUNDS.maxAttempts);
    expect(ms).toBeGreaterThanOrEqual(allAttemptsMs(ROTATION_CALL_BOUNDS) - 50);
    expect(ms).toBeLessThan(ROTATION_CALL_BOUNDS.callDeadlineMs + SLACK_MS);
    expect(warn).not.toHaveBeenCalled();
  });

  it('the key CLI: a silent Secrets Manager fails the command within 10 s, with one line on stderr', async () => {
    const server = await stalling('silent');
    const stdout: string[] = [];
    const stderr: string[] = [];

    const { outcome, ms } = await timed(() =>
      run(['list', '--secret-id', SECRET_ID], {
        stdout: { write: (text: string) => stdout.push(text) },
        stderr: { write: (text: string) => stderr.push(text) },
        env: { ...MOTO_AWS_ENV, AWS_ENDPOINT_URL: server.endpoint },
      }),
    );

    expect(outcome).toEqual({ status: 'fulfilled', value: 1 });
    expect(stderr.join('')).toBe(
      `error: could not read secret ${SECRET_ID}: Secrets Manager did not answer in time\n`,
    );
    expect(stdout).toEqual([]);
    expect(server.connections()).toBe(OPERATOR_CALL_BOUNDS.maxAttempts);
    expect(ms).toBeGreaterThanOrEqual(allAttemptsMs(OPERATOR_CALL_BOUNDS) - 50);
    expect(ms).toBeLessThan(OPERATOR_CALL_BOUNDS.callDeadlineMs + SLACK_MS);
    expect(warn).not.toHaveBeenCalled();
    expect(emitWarning).not.toHaveBeenCalled();
  });
});
