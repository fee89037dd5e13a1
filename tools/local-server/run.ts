import { createHandler, type PaymentHandler } from '../../lambda/payment/create-handler';
import { errorCode, errorMessage } from '../../shared/errors';
import { createJsonLogger } from '../../shared/logger';
import { AWS_SERVICES, readAwsClientSettings } from '../common/aws-settings';
import { startupLines } from './banner';
import { setUpKeys } from './keys-setup';
import { readLocalSettings, type LocalSettings } from './local-settings';
import { createLocalRateLimits, limiterClientSettings } from './rate-limits';
import { LocalServer } from './server';

export interface StartOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Human-readable lines (the banner). Request logs go through the JSON logger. */
  readonly print: (line: string) => void;
}

export interface RunningLocalServer {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** Graceful stop: no new connections, in-flight requests finish within `graceMs`. */
  stop(graceMs: number): Promise<{ readonly forced: boolean }>;
  /** Drops every open connection now. */
  forceStop(): void;
}

/** A start-up failure whose message is already the one line to show. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

function messageOf(error: unknown): string {
  return errorMessage(error) ?? 'unknown error';
}

function listenErrorMessage(error: unknown, settings: LocalSettings): string {
  const code = errorCode(error);
  const where = `${settings.host}:${settings.port}`;
  if (code === 'EADDRINUSE')
    return `port ${settings.port} on ${settings.host} is already in use; set PORT to a free port`;
  if (code === 'EACCES') return `not allowed to listen on ${where}; set PORT to a port above 1023`;
  return `cannot listen on ${where}: ${messageOf(error)}`;
}

/**
 * Starts the local server. It listens first, so a busy port fails before anything is written; requests that
 * arrive while the keys are being set up wait for the handler. Then the keys are found (setUpKeys: the key file,
 * created if missing and watched; one secret with KEYS_SECRET_ID; or a registry of shards, a local one watched),
 * the first key fetch starts, and the banner is printed.
 * With APP_RATE_LIMIT the handler counts each app's requests, in this process or, with RATE_LIMIT_TABLE, in
 * DynamoDB as the deployed Lambda does.
 */
export async function startLocalServer({ env, cwd, print }: StartOptions): Promise<RunningLocalServer> {
  let settings: LocalSettings;
  try {
    settings = readLocalSettings(env, cwd);
  } catch (error) {
    throw new StartupError(messageOf(error));
  }
  const logger = createJsonLogger(settings.logLevel);

  let provideHandler: (handler: PaymentHandler) => void = () => undefined;
  const handlerReady = new Promise<PaymentHandler>((resolve) => {
    provideHandler = resolve;
  });
  const server = new LocalServer({ handler: async (event) => (await handlerReady)(event), logger });

  let port: number;
  try {
    ({ port } = await server.listen(settings.port, settings.host));
  } catch (error) {
    throw new StartupError(listenErrorMessage(error, settings));
  }

  const limits = createLocalRateLimits(settings.rateLimiting, env);

  try {
    const setup = await setUpKeys({
      location: settings.keys,
      cache: settings,
      env,
      logger,
      keyPrefix: settings.keyFormat.prefix,
    });
    for (const warning of setup.warnings) print(warning);
    const { keys, watched, generated } = setup;
    provideHandler(
      createHandler({
        keys,
        logger,
        keyFormat: settings.keyFormat,
        ...(limits === undefined ? {} : { limits }),
      }),
    );

    const baseUrl = `http://${settings.host}:${port}`;
    const { region: awsRegion, endpoint: awsEndpoint } = readAwsClientSettings(
      env,
      AWS_SERVICES.secretsManager,
    );
    const { region: limiterRegion, endpoint: limiterEndpoint } = limiterClientSettings(env);
    const lines = startupLines({
      baseUrl,
      pid: process.pid,
      keys: setup.banner,
      ttlSeconds: settings.ttlMs / 1000,
      keysWatched: watched,
      ...(generated ? { generated } : {}),
      ...(awsRegion ? { awsRegion } : {}),
      ...(awsEndpoint ? { awsEndpoint } : {}),
      rateLimiting: settings.rateLimiting,
      ...(limiterRegion ? { limiterRegion } : {}),
      ...(limiterEndpoint ? { limiterEndpoint } : {}),
    });
    for (const line of lines) print(line);

    return {
      baseUrl,
      stop: (graceMs) => {
        setup.close();
        return server.close(graceMs);
      },
      forceStop: () => {
        server.closeAllConnections();
      },
    };
  } catch (error) {
    server.closeAllConnections();
    await server.close(0);
    throw new StartupError(`cannot set up the keys: ${messageOf(error)}`);
  }
}
