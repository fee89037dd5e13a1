/**
 * A fault-injecting HTTP proxy between an SDK client and moto, on a fixed loopback port. It passes calls through,
 * or fails them the way the service (Secrets Manager or DynamoDB, told apart by the call's X-Amz-Target) or the
 * network can fail, switchable at any time, and it records every call it sees so tests can bound the call rate.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type Fault =
  /** Nothing listens: connections are refused. */
  | 'refused'
  /** Connections are accepted and requests read, and nothing ever answers. */
  | 'black-holed'
  /** Answers come, but only after SLOW_ANSWER_MS: longer than any attempt's time-out. */
  | 'slow'
  /** The answer starts (status, headers, half the body), then the connection is reset. */
  | 'reset-mid-answer'
  /** The service's own throttling answer: Secrets Manager's ThrottlingException, DynamoDB's hot-partition one. */
  | 'throttling'
  /** The service's 400 AccessDeniedException, as IAM refuses the call. */
  | 'access-denied';

export type ProxyMode = 'pass' | Fault;

export const FAULTS: readonly Fault[] = [
  'refused',
  'black-holed',
  'slow',
  'reset-mid-answer',
  'throttling',
  'access-denied',
];

export const SLOW_ANSWER_MS = 3_000;

export interface RecordedCall {
  /** `GetSecretValue`, `UpdateItem`, ... from `X-Amz-Target`, without the service's prefix. */
  readonly operation: string;
  readonly at: number;
  readonly mode: ProxyMode;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`, for AWS_ENDPOINT_URL. */
  readonly endpoint: string;
  readonly calls: readonly RecordedCall[];
  mode(): ProxyMode;
  /**
   * Switches the behaviour for calls from now on; calls already held (black-holed) stay held. With `afterCalls`,
   * that many more calls pass first and the switch happens once the last of them is answered.
   */
  setMode(mode: ProxyMode, options?: { readonly afterCalls?: number }): Promise<void>;
  close(): Promise<void>;
}

interface ServiceError {
  /** As the service writes `__type`: DynamoDB prefixes the shape's namespace, which the SDK strips. */
  readonly type: string;
  readonly message: string;
}

/** How one service answers the two refusals the proxy can fake: its protocol's content type and its error shapes. */
interface ServiceErrors {
  readonly contentType: string;
  readonly throttling: ServiceError;
  readonly accessDenied: ServiceError;
}

/** Secrets Manager speaks AWS JSON 1.1. */
const SECRETS_MANAGER_ERRORS: ServiceErrors = {
  contentType: 'application/x-amz-json-1.1',
  throttling: { type: 'ThrottlingException', message: 'Rate exceeded' },
  accessDenied: {
    type: 'AccessDeniedException',
    message: 'User is not authorized to perform: secretsmanager:GetSecretValue',
  },
};

/**
 * DynamoDB speaks AWS JSON 1.0, and throttles one hot key (a partition past its 1,000 writes a second, on-demand
 * tables included) with ProvisionedThroughputExceededException.
 */
const DYNAMODB_ERRORS: ServiceErrors = {
  contentType: 'application/x-amz-json-1.0',
  throttling: {
    type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'Throughput exceeds the current capacity of your table or index.',
  },
  accessDenied: {
    type: 'com.amazon.coral.service#AccessDeniedException',
    message: 'User is not authorized to perform: dynamodb:UpdateItem on resource: table/rate-limits',
  },
};

/** The service a call is for, by its X-Amz-Target: `secretsmanager.<op>` or `DynamoDB_20120810.<op>`. */
function errorsOf(target: string): ServiceErrors {
  return target.startsWith('DynamoDB_') ? DYNAMODB_ERRORS : SECRETS_MANAGER_ERRORS;
}

function awsJsonError(res: ServerResponse, errors: ServiceErrors, error: ServiceError): void {
  const body = JSON.stringify({ __type: error.type, message: error.message });
  res.writeHead(400, {
    'Content-Type': errors.contentType,
    'x-amzn-ErrorType': error.type,
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

export function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
    stream.on('error', reject);
  });
}

export interface UpstreamAnswer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

export function forward(
  targetPort: number,
  incoming: IncomingMessage,
  body: Buffer,
): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const upstream = request(
      {
        host: '127.0.0.1',
        port: targetPort,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (response) => {
        readAll(response).then(
          (answer) => {
            resolve({ status: response.statusCode ?? 502, headers: response.headers, body: answer });
          },
          (error: unknown) => {
            reject(error instanceof Error ? error : new Error('upstream read failed'));
          },
        );
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}

export function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
}

export function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => {
      resolve();
    });
  });
}

/** Starts the proxy in front of moto's port; `pass` mode until told otherwise. */
export async function startFaultProxy(motoPort: number): Promise<FaultProxy> {
  let mode: ProxyMode = 'pass';
  let scheduled: { mode: ProxyMode; passesLeft: number } | undefined;
  const calls: RecordedCall[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    let current = mode;
    let switchAfter: ProxyMode | undefined;
    if (scheduled !== undefined) {
      current = 'pass';
      scheduled.passesLeft--;
      if (scheduled.passesLeft <= 0) {
        switchAfter = scheduled.mode;
        scheduled = undefined;
      }
    }
    const rawTarget = incoming.headers['x-amz-target'];
    const target = typeof rawTarget === 'string' ? rawTarget : 'unknown';
    calls.push({ operation: target.replace(/^[^.]*\./, ''), at: Date.now(), mode: current });
    const body = await readAll(incoming);
    const errors = errorsOf(target);
    switch (current) {
      case 'black-holed':
        return;
      case 'throttling':
        awsJsonError(outgoing, errors, errors.throttling);
        return;
      case 'access-denied':
        awsJsonError(outgoing, errors, errors.accessDenied);
        return;
      default:
        break;
    }
    const answer = await forward(motoPort, incoming, body);
    if (current === 'slow') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, SLOW_ANSWER_MS);
        timers.add(timer);
      });
    }
    if (current === 'reset-mid-answer') {
      outgoing.writeHead(answer.status, { ...answer.headers, 'content-length': String(answer.body.length) });
      outgoing.write(answer.body.subarray(0, Math.floor(answer.body.length / 2)), () => {
        outgoing.socket?.resetAndDestroy();
      });
      return;
    }
    outgoing.writeHead(answer.status, answer.headers);
    outgoing.end(answer.body, () => {
      if (switchAfter !== undefined) void switchTo(switchAfter);
    });
  };

  const server = createServer((incoming, outgoing) => {
    handle(incoming, outgoing).catch(() => {
      outgoing.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listen(server, 0);

  const switchTo = async (next: ProxyMode): Promise<void> => {
    if (next === 'refused' && server.listening) {
      // A host that went away: nothing listens, and open connections are reset.
      server.close();
      for (const socket of sockets) socket.resetAndDestroy();
    }
    if (next !== 'refused' && !server.listening) await listen(server, port);
    mode = next;
  };

  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    mode: () => mode,
    async setMode(next, options = {}) {
      if (options.afterCalls !== undefined && options.afterCalls > 0) {
        scheduled = { mode: next, passesLeft: options.afterCalls };
        return;
      }
      scheduled = undefined;
      await switchTo(next);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await closeServer(server, sockets);
    },
  };
}
