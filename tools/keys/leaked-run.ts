import { UsageError } from '../common/exit';
import type { OutputStream } from '../common/tool-io';
import { freshKey } from './changes';
import type { Command } from './cli';
import {
  planEdits,
  readAllDocuments,
  resultsAsRead,
  writePlan,
  type Plan,
  type RetryOptions,
  type ShardPlan,
  type ShardWrite,
} from './engine';
import { findLeakedKeys, leakedEdits, parseLeakedInput, type LeakedAppResult } from './leaked';
import { fileKeySink, streamKeySink, type KeySink } from './key-sink';
import {
  counted,
  formatLeaked,
  formatLeakedJson,
  leakedExitCode,
  outcomeKey,
  type AppOutcome,
} from './output';
import type { Registry } from './registry-access';

/**
 * `keys leaked`, run: standard input is read first (capped), so that bad input is refused before anything is read
 * from AWS; the keys are checked against the registry's prefix; every shard is read (BatchGetSecretValue, 20 shards
 * a call); each key is found by digest; the edits that end them go through the one change engine (planned against
 * the shards as read, then one compare-and-swap write per shard touched). A shard that fails does not stop the
 * others: a leak is ended wherever it can be. Returns the exit code.
 */

/** The most standard input leaked reads: about 20,000 keys of the key format, far more than any leak report. */
export const MAX_LEAKED_INPUT_BYTES = 1_048_576;

export type CappedRead =
  { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly read: number };

/**
 * Reads `source` to its end, or stops as soon as it holds more than `cap` bytes (the stream is then destroyed, so
 * a writer that goes on gets EPIPE rather than filling memory).
 */
export async function readCapped(
  source: AsyncIterable<Buffer | string>,
  cap: number = MAX_LEAKED_INPUT_BYTES,
): Promise<CappedRead> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    read += bytes.length;
    if (read > cap) return { ok: false, read };
    chunks.push(bytes);
  }
  return { ok: true, bytes: Buffer.concat(chunks) };
}

/** Standard input, capped; refused (before anything is read from AWS) when it is too long or cannot be shown. */
export async function readLeakedInput(
  command: Extract<Command, { name: 'leaked' }>,
  json: boolean,
  stdin: (() => AsyncIterable<Buffer | string> & { readonly isTTY?: boolean }) | undefined,
  stderr: OutputStream,
): Promise<Buffer> {
  const keysOnStdout = command.action.kind === 'rotate' && command.keysOut === undefined && !command.dryRun;
  if (keysOnStdout && json) {
    throw new UsageError(
      '--json and the new keys would both go to standard output: give --keys-out a file (created with mode 0600)',
    );
  }
  const source = stdin?.();
  if (source?.isTTY === true)
    stderr.write('reading leaked keys from the terminal, one per line; end with Ctrl-D\n');
  const reading =
    source === undefined ? { ok: true as const, bytes: Buffer.alloc(0) } : await readCapped(source);
  if (!reading.ok) {
    throw new UsageError(
      'standard input is over 1 MiB (1,048,576 bytes), the most leaked reads: give the keys in parts; nothing was looked up or written',
    );
  }
  return reading.bytes;
}

export interface LeakedRun {
  readonly registry: Registry;
  readonly command: Extract<Command, { name: 'leaked' }>;
  readonly json: boolean;
  readonly now: number;
  /** Standard input, as read (at most MAX_LEAKED_INPUT_BYTES). */
  readonly input: Buffer;
  /** The registry's key prefix: refuses a broken key of this registry, and prefixes --rotate's new keys. */
  readonly keyPrefix: string;
  readonly newKey: () => string;
  readonly concurrency: number;
  readonly retry?: RetryOptions;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** One line for an error (main.ts's errorLine): never a key. */
  readonly errorLine: (error: unknown) => string;
}

/** `{"appId","keyId","key"}` of the apps a shard's write gave a new key, each app once over the whole run. */
function newKeyLines(write: ShardWrite<LeakedAppResult>, handedOut: Set<string>): string[] {
  if (write.status === 'failed') return [];
  return write.results.flatMap((result) => {
    const fresh = result.fresh;
    if (fresh === undefined || handedOut.has(result.appId)) return [];
    handedOut.add(result.appId);
    return [JSON.stringify({ appId: result.appId, keyId: fresh.keyId, key: fresh.key })];
  });
}

export async function runLeaked(run: LeakedRun): Promise<number> {
  const { registry, command, now } = run;
  const reading = parseLeakedInput(run.input, run.keyPrefix);
  if (!reading.ok) throw new UsageError(reading.problem);
  const { input } = reading;

  const { snapshots, documents } = await readAllDocuments(registry);
  const found = findLeakedKeys(documents, input.keys);
  const edits = leakedEdits(input.keys, found, command.action, now, () => freshKey(run.newKey(), 'digest'));
  const plan = await planEdits(registry, edits, {
    createIfMissing: false,
    checkBudget: false,
    read: snapshots,
  });
  if (plan.problems.length > 0) {
    for (const problem of plan.problems) run.stderr.write(run.errorLine(problem.error));
    run.stderr.write('error: nothing was written\n');
    return 1;
  }
  for (const warning of plan.warnings) run.stderr.write(`warning: ${warning}\n`);

  const rotating = command.action.kind === 'rotate' && !command.dryRun && edits.length > 0;
  const report = rotating && command.keysOut === undefined ? run.stderr : run.stdout;
  const { outcomes, shardsWritten } = command.dryRun
    ? { outcomes: outcomesOf(plan, (shard) => resultsAsRead(plan, shard)), shardsWritten: 0 }
    : await writeLeaked(run, plan, rotating, report);
  const leaked = {
    input,
    found,
    outcomes,
    action: command.action,
    dryRun: command.dryRun,
    shardCount: documents.size,
    shardsWritten,
  };
  report.write(run.json ? formatLeakedJson(leaked) : formatLeaked(leaked));
  return leakedExitCode(leaked);
}

type LeakedPlan = Plan<LeakedAppResult>;

/**
 * Each app's outcome, shard by shard: its result (as written, or as planned for a dry run), or the reason its
 * shard's write failed. A shard without results (not started) gives its apps no outcome.
 */
function outcomesOf(
  plan: LeakedPlan,
  resultsOf: (shard: ShardPlan) => readonly (LeakedAppResult | undefined)[] | string | undefined,
): Map<string, AppOutcome> {
  const outcomes = new Map<string, AppOutcome>();
  for (const shard of plan.shards) {
    const results = resultsOf(shard);
    if (results === undefined) continue;
    shard.edits.forEach((position, at) => {
      const edit = plan.edits[position];
      if (edit === undefined) return;
      const result = typeof results === 'string' ? undefined : results[at];
      const reason = typeof results === 'string' ? results : 'no result';
      outcomes.set(
        outcomeKey(shard.index, edit.appId),
        result === undefined ? { status: 'failed', reason } : { status: 'done', result },
      );
    });
  }
  return outcomes;
}

/** Writes the plan, handing out --rotate's new keys shard by shard as each write lands. */
async function writeLeaked(
  run: LeakedRun,
  plan: LeakedPlan,
  rotating: boolean,
  report: OutputStream,
): Promise<{ outcomes: Map<string, AppOutcome>; shardsWritten: number }> {
  const { keysOut } = run.command;
  let sink: KeySink | undefined;
  if (rotating) sink = keysOut === undefined ? streamKeySink(run.stdout) : await fileKeySink(keysOut);
  const handedOut = new Set<string>();
  let keys = 0;
  const writes = await writePlan(run.registry, plan, {
    createIfMissing: false,
    concurrency: run.concurrency,
    ...(run.retry === undefined ? {} : { retry: run.retry }),
    onShard: async (write) => {
      const lines = newKeyLines(write, handedOut);
      keys += lines.length;
      await sink?.write(lines);
      return undefined;
    },
  });
  await sink?.close(keys);
  for (const write of writes) {
    if (write.status !== 'failed')
      for (const warning of write.warnings) run.stderr.write(`warning: ${warning}\n`);
  }
  if (sink !== undefined && keys > 0 && keysOut !== undefined) {
    report.write(`${counted(keys, 'new key')} written to ${sink.description} (mode 0600)\n`);
  }
  const outcomes = outcomesOf(plan, (shard) => {
    const write = writes.find((candidate) => candidate.index === shard.index);
    if (write?.status !== 'failed') return write?.results;
    return run
      .errorLine(write.error)
      .replace(/^error: /, '')
      .trimEnd();
  });
  return { outcomes, shardsWritten: writes.filter((write) => write.status === 'written').length };
}
