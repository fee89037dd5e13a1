import { readFile } from 'node:fs/promises';
import { errorCode } from '../../shared/errors';
import { EXIT_CODES, UsageError } from '../common/exit';
import { parseChangeFile, type ChangeRequest } from './change-file';
import { editOf, type EditResult } from './changes';
import type { Command } from './cli';
import {
  planEdits,
  readShardsFor,
  tallyWrites,
  unusedVersionsText,
  writePlan,
  type AppEdit,
  type RetryOptions,
  type ShardWrite,
} from './engine';
import type { OutputStream } from '../common/tool-io';
import { fileKeySink, KeyHandout, newKey, streamKeySink, type KeySink, type NewKey } from './key-sink';
import type { Registry } from './registry-access';
import {
  applyJson,
  applyShardLine,
  applySummary,
  formatDryRun,
  formatFileProblems,
  formatPlanProblems,
  type ApplyRun,
} from './output';

/**
 * `apply`: the changes of a change file (change-file.ts) as one plan: checked whole against the registry as read
 * before anything is written (any problem refuses the file), then each shard written once. Each shard's new keys
 * are handed out as soon as it lands, before its line is printed; lines come in the plan's order as shards finish.
 * If the keys cannot be handed out, no further shard is started, and every app whose new key was stored but not
 * handed out is named (its key id, never the key): `keys rotate <app>` gives it one that is.
 */

/** Shards written at once: enough to keep a round trip busy, few enough to stay far from Secrets Manager's rates. */
export const APPLY_CONCURRENCY = 4;

export interface ApplyIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly generateKey: () => string;
  readonly retry?: RetryOptions;
}

type ApplyCommand = Extract<Command, { name: 'apply' }>;

/** The file's changes, or its problems already written (a usage failure). */
export async function readChangeFile(
  path: string,
  now: number,
  io: Pick<ApplyIo, 'stderr'>,
): Promise<readonly ChangeRequest[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    throw new UsageError(`cannot read the apply file ${path}${code === undefined ? '' : ` (${code})`}`);
  }
  const reading = parseChangeFile(text, now);
  if (reading.ok) return reading.changes;
  io.stderr.write(formatFileProblems(path, reading.problems));
  throw new ReportedExit(EXIT_CODES.usage);
}

/** A run whose lines are already written: only its exit code is left to give (1 unless said). */
export class ReportedExit extends Error {
  override readonly name = 'ReportedExit';
  constructor(readonly code: number = EXIT_CODES.failed) {
    super(`exit ${code}`);
  }
}

/** Where the new keys go, checked before anything is read. */
export function checkKeysOut(
  requests: readonly ChangeRequest[],
  command: ApplyCommand,
  json: boolean,
): boolean {
  const createsKeys = requests.some((change) => change.op === 'add' || change.op === 'rotate');
  if (createsKeys && command.keysOut === undefined && !command.dryRun) {
    throw new UsageError(
      'this apply file creates keys: say where they go with --keys-out <file> (created with mode 0600) or --keys-out - (standard output)',
    );
  }
  if (command.keysOut === '-' && json) {
    throw new UsageError(
      '--json and --keys-out - would both write to standard output: give --keys-out a file',
    );
  }
  return createsKeys;
}

function newKeysOf(write: ShardWrite<EditResult>): NewKey[] {
  if (write.status === 'failed') return [];
  return write.results.flatMap((result) =>
    result.command === 'add-app' || result.command === 'rotate'
      ? [newKey(result.appId, result.fresh, result.expires)]
      : [],
  );
}

/** Lines in the plan's order, each printed as soon as every shard before it is done; `done/total` on a terminal. */
class ShardLines {
  private readonly ready = new Map<number, string>();
  private next = 0;
  private done = 0;

  constructor(
    private readonly out: OutputStream | undefined,
    private readonly progress: OutputStream,
    private readonly order: readonly number[],
  ) {}

  add(index: number, line: string): void {
    this.ready.set(index, line);
    this.done++;
    for (let shard = this.order[this.next]; shard !== undefined; shard = this.order[this.next]) {
      const ready = this.ready.get(shard);
      if (ready === undefined) break;
      this.out?.write(ready);
      this.next++;
    }
    if (this.progress.isTTY === true) {
      this.progress.write(
        `\r${this.done}/${this.order.length} shards${this.done === this.order.length ? '\r\x1b[K' : ''}`,
      );
    }
  }
}

/** Each change's edit, a few thousand at a time, letting the shards' reads go on in between. */
async function editsOf(
  requests: readonly ChangeRequest[],
  generateKey: () => string,
  now: number,
): Promise<AppEdit<EditResult>[]> {
  const edits: AppEdit<EditResult>[] = [];
  for (const request of requests) {
    edits.push(editOf(request, generateKey, now));
    if (edits.length % 2_000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return edits;
}

export async function runApply(
  registry: Registry,
  requests: readonly ChangeRequest[],
  command: ApplyCommand,
  options: { readonly json: boolean; readonly createsKeys: boolean; readonly now: number },
  io: ApplyIo,
): Promise<void> {
  const planOptions = { createIfMissing: registry.kind === 'files', checkBudget: true };
  // The shards are read while the new keys are made.
  const reading = readShardsFor(registry, requests, planOptions);
  reading.catch(() => undefined);
  const edits = await editsOf(requests, io.generateKey, options.now);
  const run = { registry, plan: await planEdits(registry, edits, planOptions, await reading), requests };
  if (run.plan.problems.length > 0) {
    io.stderr.write(formatPlanProblems(run, command.file));
    throw new ReportedExit();
  }
  // Before anything is written: the shards this apply takes past 80% full.
  for (const warning of run.plan.warnings) io.stderr.write(`warning: ${warning}\n`);
  // With the keys on standard output, the report goes to standard error.
  const report = command.keysOut === '-' ? io.stderr : io.stdout;
  if (command.dryRun) {
    report.write(formatDryRun(run, options.json));
    return;
  }
  await writeAndReport(run, command, { ...options, report }, io);
}

/** The stores' warnings of the shards written, and a note of the versions other writers made us spend. */
function writeNotes(stderr: OutputStream, writes: readonly ShardWrite<EditResult>[]): void {
  const { warnings, unusedVersions } = tallyWrites(writes);
  for (const warning of warnings) stderr.write(`warning: ${warning}\n`);
  const unused = unusedVersionsText(unusedVersions, 'the shards written');
  if (unusedVersions > 0) stderr.write(`note: the keys changed while apply ran${unused}\n`);
}

/** Writes the plan's shards, handing out each one's keys as it lands, then says what was done and what was not. */
async function writeAndReport(
  run: ApplyRun,
  command: ApplyCommand,
  options: { readonly json: boolean; readonly createsKeys: boolean; readonly report: OutputStream },
  io: ApplyIo,
): Promise<void> {
  const { registry, plan } = run;
  let sink: KeySink | undefined;
  if (options.createsKeys)
    sink = command.keysOut === '-' ? streamKeySink(io.stdout) : await fileKeySink(command.keysOut ?? '');
  const handout = new KeyHandout(sink);
  const lines = new ShardLines(
    options.json ? undefined : options.report,
    io.stderr,
    plan.shards.map(({ index }) => index),
  );
  const writes = await writePlan(registry, plan, {
    createIfMissing: registry.kind === 'files',
    concurrency: APPLY_CONCURRENCY,
    retry: io.retry,
    release: true,
    onShard: async (write, shard) => {
      const verdict = await handout.hand(newKeysOf(write));
      lines.add(write.index, applyShardLine(run, shard, write));
      return verdict;
    },
  });
  await handout.close();
  const notStarted = plan.shards.filter(({ index }) => !writes.some((write) => write.index === index));
  for (const shard of notStarted) lines.add(shard.index, applyShardLine(run, shard, undefined));
  writeNotes(io.stderr, writes);
  const outcome = {
    writes,
    keysTo: sink?.description,
    keys: handout.handedOut,
    notStarted: notStarted.map(({ index }) => index),
  };
  options.report.write(options.json ? applyJson(run, outcome) : applySummary(run, outcome));
  for (const line of handout.lostLines()) io.stderr.write(line);
  if (handout.lost.length > 0 || notStarted.length > 0 || writes.some((write) => write.status === 'failed')) {
    throw new ReportedExit();
  }
}
