/**
 * A proxy in front of moto's Secrets Manager that refuses what AWS refuses and moto does not (guide: "moto enforces
 * neither the 65,536-byte secret limit nor the version quota"), and answers BatchGetSecretValue from AWSCURRENT as
 * AWS does (moto answers from the version it created the secret with, which UpdateSecretVersionStage does not
 * move). It counts the calls it sees, so tests and the bench can bound them.
 *
 * - A SecretString over 65,536 bytes (CreateSecret, PutSecretValue, UpdateSecret): 400 ValidationException.
 * - A PutSecretValue that would make a version past the quota (100) younger than 24 hours: 400
 *   LimitExceededException. moto never removes a version, and every version of a test is younger than a day, so
 *   the count is moto's own list of the secret's versions; a retried put (its ClientRequestToken already a version)
 *   makes none and passes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SECRET_MAX_BYTES } from '../../shared/keys/secret-size';
import { awsJsonError, closeServer, forward, readAll, serveOnLoopback } from './fault-proxy';

const AWS_VERSION_QUOTA = 100;

export interface RulesProxyCall {
  /** `PutSecretValue`, `BatchGetSecretValue`, ...: X-Amz-Target without the service's prefix. */
  readonly operation: string;
  readonly secretId?: string;
  /** What the proxy answered itself, when it refused the call; undefined when moto answered. */
  readonly refused?: 'too-large' | 'version-quota';
  /** When the call reached the proxy, epoch ms. */
  readonly at: number;
}

export interface SecretsManagerRulesProxy {
  /** `http://127.0.0.1:<port>`, for AWS_ENDPOINT_URL_SECRETS_MANAGER. */
  readonly endpoint: string;
  readonly calls: readonly RulesProxyCall[];
  /** How many calls of `operation` it has seen since `since` (an index into `calls`). */
  count(operation: string, since?: number): number;
  close(): Promise<void>;
}

const CONTENT_TYPE = 'application/x-amz-json-1.1';

function jsonAnswer(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, { 'Content-Type': CONTENT_TYPE, 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/** One call of moto's Secrets Manager from the proxy itself, signed like the call that caused it (moto reads the region there). */
async function call(
  motoPort: number,
  incoming: IncomingMessage,
  operation: string,
  input: unknown,
): Promise<{ readonly status: number; readonly body: Record<string, unknown> }> {
  const body = Buffer.from(JSON.stringify(input));
  const headers = {
    'Content-Type': CONTENT_TYPE,
    'X-Amz-Target': `secretsmanager.${operation}`,
    'Content-Length': String(body.length),
    ...(incoming.headers.authorization === undefined
      ? {}
      : { Authorization: incoming.headers.authorization }),
  };
  const answer = await forward(motoPort, { method: 'POST', url: '/', headers }, body);
  return {
    status: answer.status,
    body: JSON.parse(answer.body.toString('utf8') || '{}') as Record<string, unknown>,
  };
}

function stringField(input: Record<string, unknown>, name: string): string | undefined {
  const value = input[name];
  return typeof value === 'string' ? value : undefined;
}

export async function startSecretsManagerRules(motoPort: number): Promise<SecretsManagerRulesProxy> {
  const calls: RulesProxyCall[] = [];

  async function versionsOf(incoming: IncomingMessage, secretId: string): Promise<string[] | undefined> {
    const listed = await call(motoPort, incoming, 'ListSecretVersionIds', {
      SecretId: secretId,
      IncludeDeprecated: true,
    });
    if (listed.status !== 200) return undefined;
    const versions = (listed.body.Versions ?? []) as { VersionId?: string }[];
    return versions.map((version) => version.VersionId ?? '');
  }

  async function batchGet(
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    input: Record<string, unknown>,
  ) {
    const ids = (input.SecretIdList ?? []) as string[];
    const values: unknown[] = [];
    const errors: unknown[] = [];
    for (const secretId of ids) {
      const answer = await call(motoPort, incoming, 'GetSecretValue', {
        SecretId: secretId,
        VersionStage: 'AWSCURRENT',
      });
      if (answer.status === 200) values.push(answer.body);
      else {
        errors.push({
          SecretId: secretId,
          ErrorCode: (stringField(answer.body, '__type') ?? 'ResourceNotFoundException').replace(/^.*#/, ''),
          Message: stringField(answer.body, 'message') ?? stringField(answer.body, 'Message') ?? '',
        });
      }
    }
    jsonAnswer(outgoing, { SecretValues: values, Errors: errors });
  }

  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const rawTarget = incoming.headers['x-amz-target'];
    const at = Date.now();
    const operation = (typeof rawTarget === 'string' ? rawTarget : 'unknown').replace(/^[^.]*\./, '');
    const body = await readAll(incoming);
    const input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    const secretId = stringField(input, 'SecretId') ?? stringField(input, 'Name');
    const record = (refused?: RulesProxyCall['refused']) => {
      calls.push({
        at,
        operation,
        ...(secretId === undefined ? {} : { secretId }),
        ...(refused === undefined ? {} : { refused }),
      });
    };

    const secretString = stringField(input, 'SecretString');
    if (secretString !== undefined && Buffer.byteLength(secretString, 'utf8') > SECRET_MAX_BYTES) {
      record('too-large');
      awsJsonError(outgoing, CONTENT_TYPE, {
        type: 'ValidationException',
        message: `1 validation error detected: Value at 'secretString' failed to satisfy constraint: Member must have length less than or equal to ${SECRET_MAX_BYTES}`,
      });
      return;
    }
    if (operation === 'PutSecretValue' && secretId !== undefined) {
      const versions = await versionsOf(incoming, secretId);
      const token = stringField(input, 'ClientRequestToken');
      const retry = token !== undefined && versions?.includes(token) === true;
      if (versions !== undefined && !retry && versions.length >= AWS_VERSION_QUOTA) {
        record('version-quota');
        awsJsonError(outgoing, CONTENT_TYPE, {
          type: 'LimitExceededException',
          message: 'The request failed because it would exceed one of the Secrets Manager quotas.',
        });
        return;
      }
    }
    record();
    if (operation === 'BatchGetSecretValue' && Array.isArray(input.SecretIdList)) {
      await batchGet(incoming, outgoing, input);
      return;
    }
    const answer = await forward(motoPort, incoming, body);
    outgoing.writeHead(answer.status, answer.headers);
    outgoing.end(answer.body);
  };

  const { server, sockets, port } = await serveOnLoopback(handle);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    count: (operation, since = 0) =>
      calls.slice(since).filter((entry) => entry.operation === operation).length,
    close: () => closeServer(server, sockets),
  };
}
