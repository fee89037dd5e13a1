/**
 * A fault-injecting HTTP proxy between an SDK client and moto, on a fixed loopback port. It passes calls through,
 * or fails them the way the service (Secrets Manager or DynamoDB, told apart by the call's X-Amz-Target) or the
 * network can fail, switchable at any time, for every call or only for the Secrets Manager calls naming one
 * SecretId (one shard of a key registry), and it records every call it sees so tests can bound the call rate.
 *
 * moto's conditional UpdateItem is not atomic: it reads the item, checks the condition and writes in steps that
 * concurrent calls interleave (60 concurrent increments under a capacity of 2 let 4 or 5 through). DynamoDB applies
 * each item's conditional writes one at a time. A proxy given `itemWrites` (an ItemWriteQueue, which several proxies
 * may share) makes moto do the same: the DynamoDB writes naming one item reach moto one after the other, each once
 * the one before was answered; other items' writes and every other call go on meanwhile.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';

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
  /** The Secrets Manager call's `SecretId`, when it names one. */
  readonly secretId?: string;
  readonly at: number;
  readonly mode: ProxyMode;
}

export interface ModeOptions {
  /** That many more calls pass first; the switch happens once the last of them is answered. */
  readonly afterCalls?: number;
  /**
   * Only the Secrets Manager calls naming this SecretId get the mode; the others keep theirs ('pass' ends a secret's
   * own mode). A secret cannot be refused a connection, which comes before the call names it: `refused` resets the
   * connection as soon as the call arrives, unanswered, which the SDK meets as the same kind of network error.
   */
  readonly secretId?: string;
}

/** The DynamoDB write operations that name one item (`Key`) and may carry a condition. */
const ITEM_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

/**
 * One queue per DynamoDB item: the writes naming it go to moto one at a time, in the order they arrived. Shared by
 * every proxy in front of one moto (one per execution environment, so their calls can be told apart), so that writes
 * from all of them queue together, as they do at DynamoDB.
 */
export class ItemWriteQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `write` once every earlier write of `item` has settled; the next one waits for it in turn. */
  async run<T>(item: string, write: () => Promise<T>): Promise<T> {
    const before = this.tails.get(item) ?? Promise.resolve();
    let release = (): void => undefined;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => mine);
    this.tails.set(item, tail);
    await before;
    try {
      return await write();
    } finally {
      release();
      if (this.tails.get(item) === tail) this.tails.delete(item);
    }
  }
}

/**
 * The item a DynamoDB write names (its table and `Key`, as sent), or undefined for any other call: only item
 * writes queue. Never anything else of the body.
 */
function itemOf(target: string, body: Buffer): string | undefined {
  if (!target.startsWith('DynamoDB_') || !ITEM_WRITES.has(target.replace(/^[^.]*\./, ''))) return undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      readonly TableName?: unknown;
      readonly Key?: unknown;
    };
    return JSON.stringify([parsed.TableName, parsed.Key]);
  } catch {
    return undefined;
  }
}

export interface FaultProxyOptions {
  /**
   * Makes moto apply each item's writes one at a time, as DynamoDB does (see above): pass one queue to every proxy
   * in front of the same moto. Where a test counts what conditional writes admitted, exactly or within a band.
   * Default: none (calls reach moto as they come).
   */
  readonly itemWrites?: ItemWriteQueue;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`, for AWS_ENDPOINT_URL. */
  readonly endpoint: string;
  readonly calls: readonly RecordedCall[];
  /** Switches the behaviour for calls from now on; calls already held (black-holed) stay held. */
  setMode(mode: ProxyMode, options?: ModeOptions): Promise<void>;
  /**
   * Latency added to every call that passes (0 by default): half before the call reaches moto, half before its
   * answer leaves, as a slow network path to the service would add it.
   */
  setLatency(ms: number): void;
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

/** A 400 answer of an AWS JSON protocol (`contentType` says which version) refusing the call with `error`. */
export function awsJsonError(res: ServerResponse, contentType: string, error: ServiceError): void {
  const body = JSON.stringify({ __type: error.type, message: error.message });
  res.writeHead(400, {
    'Content-Type': contentType,
    'x-amzn-ErrorType': error.type,
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

/** The SecretId a Secrets Manager call (AWS JSON) names, if any; never anything else of the body. */
function secretIdOf(target: string, body: Buffer): string | undefined {
  if (!target.startsWith('secretsmanager.')) return undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { readonly SecretId?: unknown };
    return typeof parsed.SecretId === 'string' ? parsed.SecretId : undefined;
  } catch {
    return undefined;
  }
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

/** Sends `body` to 127.0.0.1:`targetPort` with the method, path and headers of `incoming`; resolves with the answer. */
export function forward(
  targetPort: number,
  incoming: Pick<IncomingMessage, 'method' | 'url' | 'headers'>,
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

export function listen(server: NetServer, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
}

export function closeServer(server: NetServer, sockets: Set<Socket>): Promise<void> {
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

export interface LoopbackServer {
  readonly server: Server;
  /** Its open connections, for closeServer (and a proxy that resets them). */
  readonly sockets: Set<Socket>;
  readonly port: number;
}

/**
 * An HTTP server on a free port of 127.0.0.1 answering with `handle`, which destroys an answer it fails to give, and
 * keeping its open connections.
 */
export async function serveOnLoopback(
  handle: (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>,
): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = createServer((incoming, outgoing) => {
    handle(incoming, outgoing).catch(() => {
      outgoing.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return { server, sockets, port: await listen(server, 0) };
}

/** Starts the proxy in front of moto's port; `pass` mode until told otherwise. */
export async function startFaultProxy(
  motoPort: number,
  options: FaultProxyOptions = {},
): Promise<FaultProxy> {
  let mode: ProxyMode = 'pass';
  let latencyMs = 0;
  let scheduled: { mode: ProxyMode; passesLeft: number } | undefined;
  const secretModes = new Map<string, Fault>();
  const calls: RecordedCall[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const pause = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

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
    const at = Date.now();
    const body = await readAll(incoming);
    const secretId = secretIdOf(target, body);
    current = (secretId === undefined ? undefined : secretModes.get(secretId)) ?? current;
    calls.push({
      operation: target.replace(/^[^.]*\./, ''),
      ...(secretId === undefined ? {} : { secretId }),
      at,
      mode: current,
    });
    const errors = errorsOf(target);
    switch (current) {
      case 'refused':
        // Only a secret's own mode gets here: a refused proxy is not listening.
        incoming.socket.resetAndDestroy();
        return;
      case 'black-holed':
        return;
      case 'throttling':
        awsJsonError(outgoing, errors.contentType, errors.throttling);
        return;
      case 'access-denied':
        awsJsonError(outgoing, errors.contentType, errors.accessDenied);
        return;
      default:
        break;
    }
    const added = current === 'pass' ? latencyMs : 0;
    if (added > 0) await pause(added / 2);
    const item = options.itemWrites === undefined ? undefined : itemOf(target, body);
    const answer =
      item === undefined || options.itemWrites === undefined
        ? await forward(motoPort, incoming, body)
        : await options.itemWrites.run(item, () => forward(motoPort, incoming, body));
    if (added > 0) await pause(added / 2);
    if (current === 'slow') await pause(SLOW_ANSWER_MS);
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

  const { server, sockets, port } = await serveOnLoopback(handle);

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
    async setMode(next, options = {}) {
      if (options.secretId !== undefined) {
        if (next === 'pass') secretModes.delete(options.secretId);
        else secretModes.set(options.secretId, next);
        return;
      }
      if (options.afterCalls !== undefined && options.afterCalls > 0) {
        scheduled = { mode: next, passesLeft: options.afterCalls };
        return;
      }
      scheduled = undefined;
      await switchTo(next);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await closeServer(server, sockets);
    },
  };
}
