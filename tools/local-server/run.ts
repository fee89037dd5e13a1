import { KeyCache, type SecretSource } from '../../lambda/payment/key-cache';
import { fileSource } from './file-source';
import {
  createPaymentSecretsManagerClient,
  secretsManagerSource,
} from '../../lambda/payment/secrets-manager-source';
import { AWS_JSON_SERVICES } from '../../shared/aws/aws-environment';
import { createHandler, type PaymentHandler } from '../../lambda/payment/create-handler';
import { errorCode, errorMessage } from '../../shared/errors';
import { createJsonLogger } from '../../shared/logger';
import { AWS_SERVICES, readAwsClientSettings } from '../common/aws-settings';
import { localAwsAccess } from './aws-access';
import { startupLines } from './banner';
import { ensureKeysFile, keysFilePermissionWarning } from './keys-file';
import { readLocalSettings, type LocalSettings } from './local-settings';
import { createLocalRateLimits, limiterClientSettings } from './rate-limits';
import { LocalServer } from './server';
import { watchKeysFile, type KeysFileWatch } from './watch-keys-file';

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
 * arrive while the keys are being set up wait for the handler. Then the keys file is created if missing and watched
 * (or Secrets Manager is used when KEYS_SECRET_ID is set), the first key fetch starts, and the banner is printed.
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
    let source: SecretSource;
    let generated: { appId: string; key: string } | undefined;
    if (settings.keys.kind === 'file') {
      const setup = await ensureKeysFile(settings.keys.path);
      if (setup.created) {
        generated = { appId: setup.appId, key: setup.key };
      } else {
        const warning = await keysFilePermissionWarning(settings.keys.path).catch(() => undefined);
        if (warning !== undefined) print(warning);
      }
      source = fileSource(settings.keys.path);
    } else {
      // The Lambda's own client and bounds; the region and credentials from the SDK's full chain (profiles, SSO).
      source = secretsManagerSource(
        settings.keys.secretId,
        createPaymentSecretsManagerClient(localAwsAccess(env, AWS_JSON_SERVICES.secretsManager)),
      );
    }

    const keys = new KeyCache({ source, logger, ttlMs: settings.ttlMs, maxStaleMs: settings.maxStaleMs });
    keys.warm();
    // A key added with the key CLI works at once: the file is read again as soon as it changes (the TTL's re-read
    // stays, should a change go unseen).
    const watch: KeysFileWatch | undefined =
      settings.keys.kind === 'file'
        ? watchKeysFile(
            settings.keys.path,
            () => {
              keys.reload();
            },
            logger,
          )
        : undefined;
    provideHandler(createHandler({ keys, logger, ...(limits === undefined ? {} : { limits }) }));

    const baseUrl = `http://${settings.host}:${port}`;
    const { region: awsRegion, endpoint: awsEndpoint } = readAwsClientSettings(
      env,
      AWS_SERVICES.secretsManager,
    );
    const { region: limiterRegion, endpoint: limiterEndpoint } = limiterClientSettings(env);
    const lines = startupLines({
      baseUrl,
      pid: process.pid,
      keys: settings.keys,
      ttlSeconds: settings.ttlMs / 1000,
      keysWatched: watch !== undefined,
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
        watch?.close();
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
