/**
 * Several execution environments of the payment Lambda at once: each a fresh Node process that loads the bundled
 * asset as the runtime does (require index.js, call `handler` with the event and a Lambda context) and invokes it
 * one request at a time. Every process warms up and says so; then all start at one instant agreed with them, so
 * their requests interleave as a scaled-out function's do. Each invocation is timed in its own process. A `loop`
 * runs until the test says stop, while it does something else (a reshard), and a process can be paused meanwhile
 * (an environment left idle, as Lambda leaves one between invocations).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** A client of the fleet: one stream of requests per process, at a steady pace. */
export interface RequestStream {
  /** Names the stream's invocations. */
  readonly name: string;
  readonly event: unknown;
  /** Requests per second this stream sends from each process. */
  readonly perSecond: number;
  /**
   * What happens to a slot that passed while an earlier request ran: `send` it at once (a flood offers all it can),
   * or `skip` it (a client that never sends faster than its pace).
   */
  readonly whenLate: 'send' | 'skip';
  /**
   * `paced`: one request every 1/perSecond s. `random`: gaps drawn at random around that (a Poisson stream), as
   * independent clients arrive, so two may come close together. Default paced.
   */
  readonly arrivals?: 'paced' | 'random';
}

/** An event of a loop, and the name its invocations go by. */
export interface NamedEvent {
  readonly name: string;
  readonly event: unknown;
}

/** What each process does from the start instant on. */
export type Workload =
  /** The streams, interleaved by their slots (each process's slots offset by its share of an interval). */
  | { readonly kind: 'streams'; readonly streams: readonly RequestStream[]; readonly durationMs: number }
  /** These events, in order, one at a time. */
  | { readonly kind: 'sequence'; readonly events: readonly unknown[] }
  /**
   * These events in turn, over and over, `gapMs` apart (each process from its own offset), until the fleet is
   * finished; each whole pass over them is reported as it ends (RunningFleet.passedSince).
   */
  | { readonly kind: 'loop'; readonly events: readonly NamedEvent[]; readonly gapMs: number };

export interface FleetOptions {
  readonly assetDir: string;
  /** Every process's environment, which starts empty but for PATH: nothing of the test process leaks in. */
  readonly env: Readonly<Record<string, string>>;
  /** One entry per process: the variables it adds to `env`. */
  readonly processes: readonly Readonly<Record<string, string>>[];
  /** Invoked one at a time in each process before it reports ready (keys loaded, connections open). */
  readonly warmUp: readonly unknown[];
  /** The status every warm-up event must get (one of them, when several are given). Default 200. */
  readonly warmUpStatus?: number | readonly number[];
  readonly workload: Workload;
  /**
   * Runs once every process is ready, with the start instant about to be given to them (e.g. to switch a fault on,
   * or to set a counter as of that instant). No process starts before it has settled.
   */
  readonly beforeStart?: (startAt: number) => Promise<void>;
  /** The start instant, given the earliest it may be (START_NOTICE_MS from when all are ready). Default: that. */
  readonly startAt?: (earliest: number) => number;
}

export interface Invocation {
  /** Index of the process in `FleetOptions.processes`. */
  readonly process: number;
  /** The stream's name; `sequence` for a sequence. */
  readonly stream: string;
  /** Epoch milliseconds, just before the handler was called. */
  readonly startedAt: number;
  /** From the call to its answer, in the invoking process. */
  readonly tookMs: number;
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface FleetRun {
  /** The instant every process started at, epoch milliseconds. */
  readonly startAt: number;
  /** Every process's invocations after the warm-up, in the order each made them. */
  readonly invocations: readonly Invocation[];
  /** What each process printed: its Lambda logs and EMF lines. */
  readonly outputs: readonly string[];
}

/** A fleet under way. */
export interface RunningFleet {
  /** The instant every process started at, epoch milliseconds. */
  readonly startAt: number;
  /** What process `index` has printed so far. */
  output(index: number): string;
  /**
   * Resolves once each of `processes` (default: all) has made a whole pass of its loop that started at or after
   * `since` (epoch ms). A pass cut by a pause does not count.
   */
  passedSince(since: number, processes?: readonly number[]): Promise<void>;
  /** Resolves once process `index` has stopped between two invocations, invoking nothing until resumed. */
  pause(index: number): Promise<void>;
  resume(index: number): void;
  /** Ends every loop after the invocation under way (the other workloads end on their own) and collects the run. */
  finish(): Promise<FleetRun>;
  /** Kills every process now (a test's clean-up after a failure). */
  abort(): void;
}

/**
 * From the moment every process is ready to the start: time for `beforeStart` and for the start message to reach
 * them, all idle. A process told late starts at once: it is late, not wrong.
 */
const START_NOTICE_MS = 500;

/** The process's side. Only Node built-ins: the asset must carry its own dependencies. */
const DRIVER = `
const { performance } = require('node:perf_hooks');
let handler;
let setup;
let invocations = 0;
const context = () => {
  invocations++;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'payment-api-fleet',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:payment-api-fleet',
    memoryLimitInMB: '256',
    awsRequestId: 'env-' + setup.index + '-request-' + invocations,
    logGroupName: '/aws/lambda/payment-api-fleet',
    logStreamName: '2026/11/22/[$LATEST]' + setup.index,
    getRemainingTimeInMillis: () => 10000,
  };
};
async function invoke(stream, event) {
  const startedAt = Date.now();
  const began = performance.now();
  const result = await handler(event, context());
  return {
    process: setup.index,
    stream,
    startedAt,
    tookMs: performance.now() - began,
    statusCode: result.statusCode,
    headers: result.headers || {},
    body: result.body,
  };
}
const until = (at) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
async function runStreams(startAt, { streams, durationMs }) {
  const end = startAt + durationMs;
  const records = [];
  const slots = streams.map((stream) => {
    const interval = 1000 / stream.perSecond;
    const gap = stream.arrivals === 'random' ? () => -Math.log(1 - Math.random()) * interval : () => interval;
    return { ...stream, interval, gap, next: startAt + (setup.index / setup.count) * interval };
  });
  for (;;) {
    const due = slots.filter((slot) => slot.next < end);
    if (due.length === 0) break;
    const slot = due.reduce((first, other) => (other.next < first.next ? other : first));
    const now = Date.now();
    if (slot.next > now) await until(slot.next);
    else if (slot.whenLate === 'skip') slot.next += Math.floor((now - slot.next) / slot.interval) * slot.interval;
    if (Date.now() >= end) break;
    slot.next += slot.gap();
    records.push(await invoke(slot.name, slot.event));
  }
  return records;
}
async function runSequence(events) {
  const records = [];
  for (const event of events) records.push(await invoke('sequence', event));
  return records;
}
const control = { stop: false, pause: false, wake: undefined };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function runLoop({ events, gapMs }) {
  const records = [];
  let next = Math.floor((setup.index * events.length) / setup.count);
  let passStartedAt = Date.now();
  let invoked = 0;
  while (!control.stop) {
    if (control.pause) {
      await new Promise((resolve) => {
        control.wake = resolve;
        process.send({ type: 'paused' });
      });
      passStartedAt = Date.now();
      invoked = 0;
      continue;
    }
    const { name, event } = events[next];
    records.push(await invoke(name, event));
    next = (next + 1) % events.length;
    if (++invoked === events.length) {
      process.send({ type: 'pass', startedAt: passStartedAt });
      passStartedAt = Date.now();
      invoked = 0;
    }
    if (gapMs > 0) await sleep(gapMs);
  }
  return records;
}
const wake = () => {
  const resolve = control.wake;
  control.wake = undefined;
  if (resolve) resolve();
};
// The test process gone (a failed or killed run): nothing is left to invoke for.
process.on('disconnect', () => process.exit(1));
process.on('message', (message) => {
  if (message.type === 'stop') {
    control.stop = true;
    wake();
    return;
  }
  if (message.type === 'pause') {
    control.pause = true;
    return;
  }
  if (message.type === 'resume') {
    control.pause = false;
    wake();
    return;
  }
  (async () => {
    if (message.type === 'setup') {
      setup = message;
      ({ handler } = require(setup.assetFile));
      const warmUp = [];
      for (const event of setup.warmUp) warmUp.push((await handler(event, context())).statusCode);
      process.send({ type: 'ready', warmUp });
    } else if (message.type === 'start') {
      await until(message.at);
      const { workload } = message;
      const records =
        workload.kind === 'streams'
          ? await runStreams(message.at, workload)
          : workload.kind === 'loop'
            ? await runLoop(workload)
            : await runSequence(workload.events);
      process.send({ type: 'done', records }, () => process.exit(0));
    }
  })().catch((error) => {
    console.error('fleet driver failed:', error && error.name, error && error.message);
    process.exit(1);
  });
});
`;

type FromProcess =
  | { readonly type: 'ready'; readonly warmUp: readonly number[] }
  | { readonly type: 'pass'; readonly startedAt: number }
  | { readonly type: 'paused' }
  | { readonly type: 'done'; readonly records: readonly Invocation[] };

interface Environment {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly done: Promise<readonly Invocation[]>;
  /** When each whole pass of its loop started. */
  readonly passes: readonly number[];
  /** Resolves with the next message of this type. */
  next<T extends FromProcess['type']>(type: T): Promise<Extract<FromProcess, { type: T }>>;
  output(): string;
}

function startEnvironment(options: FleetOptions, index: number): Environment {
  const child = spawn(process.execPath, ['-e', DRIVER], {
    env: { PATH: process.env.PATH ?? '', ...options.env, ...options.processes[index] },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  // 'close', not 'exit': by then stdout has been read to its end.
  const exited = new Promise<string>((resolve) => {
    child.once('close', (code, signal) => {
      resolve(`environment ${index} exited (${signal ?? `code ${code}`}): ${stderr}`);
    });
  });
  const message = <T extends FromProcess['type']>(type: T): Promise<Extract<FromProcess, { type: T }>> =>
    Promise.race([
      new Promise<Extract<FromProcess, { type: T }>>((resolve) => {
        const listen = (received: FromProcess): void => {
          if (received.type !== type) return;
          child.off('message', listen);
          resolve(received as Extract<FromProcess, { type: T }>);
        };
        child.on('message', listen);
      }),
      exited.then((reason): never => {
        throw new Error(reason);
      }),
    ]);
  const expected = [options.warmUpStatus ?? 200].flat();
  const ready = message('ready').then(({ warmUp }) => {
    if (warmUp.some((status) => !expected.includes(status))) {
      throw new Error(
        `environment ${index} warmed up with ${warmUp.join(', ')}, not ${expected.join(' or ')} each`,
      );
    }
  });
  const done = message('done').then(async ({ records }) => {
    await exited;
    return records;
  });
  const passes: number[] = [];
  child.on('message', (received: FromProcess) => {
    if (received.type === 'pass') passes.push(received.startedAt);
  });
  // Rejections are read through `ready` and `done`; these copies only keep an early exit from going unhandled.
  ready.catch(() => undefined);
  done.catch(() => undefined);
  child.send({
    type: 'setup',
    index,
    count: options.processes.length,
    assetFile: join(options.assetDir, 'index.js'),
    warmUp: options.warmUp,
  });
  return { child, ready, done, passes, next: message, output: () => stdout };
}

function kill(environments: readonly Environment[]): void {
  for (const { child } of environments) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Starts the fleet, waits until every process is ready, and starts them at one instant. */
export async function startFleet(options: FleetOptions): Promise<RunningFleet> {
  const environments = options.processes.map((_env, index) => startEnvironment(options, index));
  let startAt: number;
  try {
    await Promise.all(environments.map((environment) => environment.ready));
    const earliest = Date.now() + START_NOTICE_MS;
    startAt = options.startAt?.(earliest) ?? earliest;
    await options.beforeStart?.(startAt);
    for (const { child } of environments)
      child.send({ type: 'start', at: startAt, workload: options.workload });
  } catch (error) {
    kill(environments);
    throw error;
  }
  let finished: Promise<FleetRun> | undefined;
  const environment = (index: number): Environment => {
    const found = environments[index];
    if (found === undefined) throw new Error(`the fleet has no process ${index}`);
    return found;
  };
  return {
    startAt,
    output: (index) => environment(index).output(),
    async passedSince(since, processes = environments.map((_, index) => index)) {
      const passed = (index: number): boolean => environment(index).passes.some((at) => at >= since);
      while (!processes.every(passed)) {
        // A process that exits early fails the wait rather than hold it forever.
        await Promise.race([
          new Promise((resolve) => setTimeout(resolve, 20)),
          ...processes.map((index) => environment(index).done),
        ]);
      }
    },
    async pause(index) {
      const paused = environment(index).next('paused');
      environment(index).child.send({ type: 'pause' });
      await paused;
    },
    resume(index) {
      environment(index).child.send({ type: 'resume' });
    },
    finish() {
      // Once: a test's `finally` may call it again after a failure.
      finished ??= (async () => {
        try {
          if (options.workload.kind === 'loop') {
            for (const { child } of environments) if (child.connected) child.send({ type: 'stop' });
          }
          const invocations = (await Promise.all(environments.map(({ done }) => done))).flat();
          return { startAt, invocations, outputs: environments.map((environment) => environment.output()) };
        } finally {
          kill(environments);
        }
      })();
      return finished;
    },
    abort() {
      kill(environments);
    },
  };
}

/** Starts the fleet, waits until every process is ready, starts them at one instant and collects what they did. */
export async function runFleet(options: FleetOptions): Promise<FleetRun> {
  return (await startFleet(options)).finish();
}
