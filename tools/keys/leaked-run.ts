import { UsageError } from '../common/exit';
import { freshKey } from './changes';
import type { Command } from './cli';
import {
  planEdits,
  readAllDocuments,
  resultsAsRead,
  writePlan,
  type Plan,
  type RetryOptions,
  type ShardWrite,
} from './engine';
import { findLeakedKeys, leakedEdits, type LeakedAppResult } from './leaked';
import { parseLeakedInput } from './leaked-input';
import {
  formatLeaked,
  formatLeakedJson,
  leakedExitCode,
  outcomeKey,
  type AppOutcome,
  type LeakedReport,
} from './leaked-report';
import { fileKeySink, streamKeySink, type KeySink } from './key-sink';
import type { Registry } from './registry-access';

/**
 * `keys leaked`, run: the keys (already read from standard input) are checked against the registry's prefix; every
 * shard is read (BatchGetSecretValue, 20 shards a call); each key is found by digest; the edits that end them go
 * through the one change engine (planned against the shards as read, then one compare-and-swap write per shard
 * touched). A shard that fails does not stop the others: a leak is ended wherever it can be. Returns the exit code.
 */

type Output = { write(text: string): unknown };

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
  readonly stdout: Output;
  readonly stderr: Output;
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

const reasonOf = (line: string): string => line.replace(/^error: /, '').trimEnd();

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
  const report: Output = rotating && command.keysOut === undefined ? run.stderr : run.stdout;
  const { outcomes, shardsWritten } = command.dryRun
    ? { outcomes: dryRunOutcomes(plan), shardsWritten: 0 }
    : await writeLeaked(run, plan, rotating, report);
  const leaked: LeakedReport = {
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

/** What each app's edit would do, made on the shards as read. */
function dryRunOutcomes(plan: LeakedPlan): Map<string, AppOutcome> {
  const outcomes = new Map<string, AppOutcome>();
  for (const shard of plan.shards) {
    const results = resultsAsRead(plan, shard);
    shard.edits.forEach((position, at) => {
      const edit = plan.edits[position];
      const result = results[at];
      if (edit !== undefined && result !== undefined) {
        outcomes.set(outcomeKey(shard.index, edit.appId), { status: 'done', result });
      }
    });
  }
  return outcomes;
}

/** Writes the plan, handing out --rotate's new keys shard by shard as each write lands. */
async function writeLeaked(
  run: LeakedRun,
  plan: LeakedPlan,
  rotating: boolean,
  report: Output,
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
  const outcomes = new Map<string, AppOutcome>();
  let shardsWritten = 0;
  for (const write of writes) {
    if (write.status === 'written') shardsWritten++;
    if (write.status !== 'failed')
      for (const warning of write.warnings) run.stderr.write(`warning: ${warning}\n`);
    recordWrite(run, plan, write, outcomes);
  }
  if (sink !== undefined && keys > 0 && keysOut !== undefined) {
    report.write(`${keys} new key${keys === 1 ? '' : 's'} written to ${sink.description} (mode 0600)\n`);
  }
  return { outcomes, shardsWritten };
}

/** Each app's outcome in one shard's write: done with its result, or failed with the write's reason. */
function recordWrite(
  run: LeakedRun,
  plan: LeakedPlan,
  write: ShardWrite<LeakedAppResult>,
  outcomes: Map<string, AppOutcome>,
): void {
  const shard = plan.shards.find((candidate) => candidate.index === write.index);
  if (shard === undefined) return;
  shard.edits.forEach((position, at) => {
    const edit = plan.edits[position];
    if (edit === undefined) return;
    if (write.status === 'failed') {
      outcomes.set(outcomeKey(shard.index, edit.appId), {
        status: 'failed',
        reason: reasonOf(run.errorLine(write.error)),
      });
      return;
    }
    const result = write.results[at];
    outcomes.set(
      outcomeKey(shard.index, edit.appId),
      result === undefined ? { status: 'failed', reason: 'no result' } : { status: 'done', result },
    );
  });
}
