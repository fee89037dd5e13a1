import { UsageError } from '../common/exit';
import { APPLY_CONCURRENCY, ReportedExit, type ApplyIo } from './apply';
import type { OutputStream } from '../common/tool-io';
import { freshKey } from './changes';
import type { Command } from './cli';
import { planEdits, readAllDocuments, resultsAsRead, tallyWrites, writePlan, type Plan } from './engine';
import { findLeakedKeys, leakedEdits, parseLeakedInput, type LeakedAppResult } from './leaked';
import { fileKeySink, KeyHandout, newKey, streamKeySink, type KeySink } from './key-sink';
import { counted, LEAKED_EXIT, leakedReport, type ShardOutcomes } from './output';
import type { Registry } from './registry-access';

/**
 * `keys leaked`, run: standard input is read first (capped), so that bad input is refused before anything is read
 * from AWS; the keys are checked against the registry's prefix; every shard is read (BatchGetSecretValue, 20 shards
 * a call); each key is found by digest; the edits that end them go through the one change engine (planned against
 * the shards as read, then one compare-and-swap write per shard touched). A shard that fails does not stop the
 * others: a leak is ended wherever it can be; only --rotate's new keys that cannot be handed out stop the run, as
 * in apply. Returns the exit code.
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
  /** One line for an error (main.ts's errorLine): never a key. */
  readonly errorLine: (error: unknown) => string;
}

export async function runLeaked(run: LeakedRun, io: ApplyIo): Promise<void> {
  const { registry, command, now } = run;
  const reading = parseLeakedInput(run.input, run.keyPrefix);
  if (!reading.ok) throw new UsageError(reading.problem);
  const { input } = reading;

  const read = await readAllDocuments(registry);
  const { documents } = read;
  const found = findLeakedKeys(documents, input.keys);
  const edits = leakedEdits(input.keys, found, command.action, now, () =>
    freshKey(io.generateKey(), 'digest'),
  );
  const plan = await planEdits(registry, edits, { createIfMissing: false, checkBudget: false }, read);
  if (plan.problems.length > 0) {
    for (const problem of plan.problems) io.stderr.write(run.errorLine(problem.error));
    io.stderr.write('error: nothing was written\n');
    throw new ReportedExit();
  }
  for (const warning of plan.warnings) io.stderr.write(`warning: ${warning}\n`);

  const rotating = command.action.kind === 'rotate' && !command.dryRun && edits.length > 0;
  const report = rotating && command.keysOut === undefined ? io.stderr : io.stdout;
  const written = command.dryRun
    ? {
        outcomes: new Map(plan.shards.map((shard) => [shard.index, resultsAsRead(plan, shard)])),
        shardsWritten: 0,
        lostKeyLines: [],
      }
    : await writeLeaked(run, io, plan, rotating, report);
  const { action, dryRun } = command;
  const leaked = { ...written, input, found, action, dryRun, shardCount: documents.size };
  const { text, code } = leakedReport(leaked, run.json);
  report.write(text);
  for (const line of written.lostKeyLines) io.stderr.write(line);
  const exit = written.lostKeyLines.length > 0 ? LEAKED_EXIT.failed : code;
  if (exit !== LEAKED_EXIT.ok) throw new ReportedExit(exit);
}

/**
 * Writes the plan, handing out --rotate's new keys shard by shard as each write lands; if they cannot be handed out,
 * no further shard is started (its leaked keys are reported not ended) and each app whose new key was stored but
 * not handed out gets a line, as apply's do.
 */
async function writeLeaked(
  run: LeakedRun,
  io: ApplyIo,
  plan: Plan<LeakedAppResult>,
  rotating: boolean,
  report: OutputStream,
): Promise<{ outcomes: ShardOutcomes; shardsWritten: number; lostKeyLines: string[] }> {
  const { keysOut } = run.command;
  let sink: KeySink | undefined;
  if (rotating) sink = keysOut === undefined ? streamKeySink(io.stdout) : await fileKeySink(keysOut);
  const handout = new KeyHandout(sink);
  const writes = await writePlan(run.registry, plan, {
    createIfMissing: false,
    concurrency: APPLY_CONCURRENCY,
    retry: io.retry,
    onShard: (write) =>
      handout.hand(
        write.status === 'failed'
          ? []
          : write.results.flatMap(({ appId, fresh }) => (fresh === undefined ? [] : [newKey(appId, fresh)])),
      ),
  });
  await handout.close();
  for (const warning of tallyWrites(writes).warnings) io.stderr.write(`warning: ${warning}\n`);
  if (handout.handedOut > 0 && keysOut !== undefined) {
    report.write(`${counted(handout.handedOut, 'new key')} written to ${keysOut} (mode 0600)\n`);
  }
  const reasonOf = (error: unknown) =>
    run
      .errorLine(error)
      .replace(/^error: /, '')
      .trimEnd();
  return {
    outcomes: new Map(
      writes.map((write) => [write.index, write.status === 'failed' ? reasonOf(write.error) : write.results]),
    ),
    shardsWritten: writes.filter((write) => write.status === 'written').length,
    lostKeyLines: handout.lostLines(),
  };
}
