import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { byCodeUnit, KeyDocumentError, MalformedEntryError } from '../../shared/keys/key-document';
import { DEFAULT_KEY_PREFIX, generatePrefixedKey } from '../../shared/keys/key-format';
import { shardsToSearch, type RegistryManifest } from '../../shared/keys/registry';
import { errorLine as toolErrorLine, EXIT_CODES, exitCodeOf, UsageError } from '../common/exit';
import { StackReadError } from '../common/stack-outputs';
import type { Env, ToolIo } from '../common/tool-io';
import { checkKeysOut, readChangeFile, ReportedExit, runApply } from './apply';
import { editOf, pruneChange, type EditResult, type PruneAppResult } from './changes';
import { runProgram, type Command, type Invocation } from './cli';
import {
  ConflictError,
  planAndWrite,
  readAllDocuments,
  readShardsFor,
  ShardError,
  tallyWrites,
  unusedVersionsText,
  type AppEdit,
  type RetryOptions,
  type ShardWrite,
} from './engine';
import { KeyStoreError } from './key-store';
import { readLeakedInput, runLeaked } from './leaked-run';
import { finishFileReshard, initRegistryFile, reshardedManifest, startFileReshard } from './local-registry';
import { counted, formatReshard, formatResult, formatResultJson, formatWhere } from './output';
import { streamList } from './list';
import { placeApps } from './placement';
import { openRegistry, type Registry, type RegistryClients } from './registry-access';
import { reshard, type ReshardOptions } from './reshard';
import { SecretTooLargeError } from './size-guard';

export interface CliIo extends ToolIo {
  /** Test seams; the defaults are the real thing. */
  readonly createSecretsManagerClient?: (env: Env) => SecretsManagerClient;
  readonly createCloudFormationClient?: (
    env: Env,
    secretsManager: SecretsManagerClient,
  ) => CloudFormationClient;
  /** Makes a new key with the registry's prefix; default generatePrefixedKey. */
  readonly generateKey?: (prefix: string) => string;
  /** Standard input, asked for only by `leaked`; absent: empty. */
  readonly stdin?: () => AsyncIterable<Buffer | string> & { readonly isTTY?: boolean };
  /** The clock expiries are set and judged by, read once per command. */
  readonly now?: () => number;
  readonly retry?: RetryOptions;
  /** How reshard waits between copying and removing; default a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * The clients a registry needs, each made once and only when it is needed: the SDK loads with the first, so a
 * command on local files runs without it.
 */
function registryClients(io: CliIo): RegistryClients {
  let secretsManager: Promise<SecretsManagerClient> | undefined;
  let cloudFormation: Promise<CloudFormationClient> | undefined;
  const secretsManagerClient = (): Promise<SecretsManagerClient> =>
    (secretsManager ??= import('../common/aws-clients').then(
      ({ createOperatorSecretsManagerClient }) =>
        io.createSecretsManagerClient?.(io.env) ??
        createOperatorSecretsManagerClient(io.env, io.awsCallBounds),
    ));
  return {
    now: () => (io.now ?? Date.now)(),
    secretsManager: secretsManagerClient,
    cloudFormation: () =>
      (cloudFormation ??= Promise.all([import('../common/aws-clients'), secretsManagerClient()]).then(
        ([{ createOperatorCloudFormationClient }, client]) =>
          io.createCloudFormationClient?.(io.env, client) ??
          createOperatorCloudFormationClient(client, io.env, io.awsCallBounds),
      )),
  };
}

/**
 * The prefix new keys are made with: the stack's KeyPrefix output when it has one, else --key-prefix (or
 * KEYS_KEY_PREFIX), else the default. A prefix given that differs from the stack's is refused: the stack's readers
 * would take such keys for legacy ones.
 */
function keyPrefixFor(registry: Registry, given: string | undefined): string {
  if (registry.keyPrefix !== undefined && given !== undefined && given !== registry.keyPrefix) {
    throw new UsageError(
      "--key-prefix (or KEYS_KEY_PREFIX) differs from the stack's KeyPrefix output: leave it out, the stack's own is used",
    );
  }
  return registry.keyPrefix ?? given ?? DEFAULT_KEY_PREFIX;
}

/** A maker of new keys with the prefix keyPrefixFor chose. */
function keyMaker(io: CliIo, prefix: string): () => string {
  const make = io.generateKey ?? generatePrefixedKey;
  return () => make(prefix);
}

const KNOWN_FAILURES = [
  UsageError,
  KeyDocumentError,
  KeyStoreError,
  ConflictError,
  SecretTooLargeError,
  StackReadError,
];

/** One line, whatever went wrong (see tools/common/exit.ts), never a key. */
export function errorLine(error: unknown): string {
  if (error instanceof ShardError) {
    return errorLine(error.error).replace(/^error: /, `error: ${error.label}: `);
  }
  // The operator is editing this very secret: name the app of a malformed entry, which logs never do.
  const shown = error instanceof MalformedEntryError ? new KeyDocumentError(error.forOperator()) : error;
  return toolErrorLine(shown, KNOWN_FAILURES);
}

/** The warnings of shard writes, and a note when other writers made the edits run again. */
function writeNotes(io: CliIo, writes: readonly ShardWrite<unknown>[], label: string): void {
  const { warnings, attempts, unusedVersions: unused } = tallyWrites(writes);
  for (const warning of warnings) io.stderr.write(`warning: ${warning}\n`);
  if (attempts > 1) {
    io.stderr.write(
      `note: the keys changed while this command ran; applied on attempt ${attempts}${unusedVersionsText(unused, label)}\n`,
    );
  }
}

/** Plans, checks and writes a command's edits of apps; throws a problem as it was found, then a failed write. */
async function runEdits<Result>(
  registry: Registry,
  edits: readonly AppEdit<Result>[],
  io: CliIo,
  createIfMissing: boolean,
): Promise<(Result | undefined)[]> {
  const { writes, results } = await planAndWrite(registry, edits, {
    createIfMissing,
    retry: io.retry,
    warn: (warning) => io.stderr.write(`warning: ${warning}\n`),
  });
  writeNotes(io, writes, registry.sharded ? "the app's shard" : registry.shard(0).store.description);
  return results;
}

/** One command as it runs: what was asked (checked), the clock read once, and its registry, opened when needed. */
interface Run extends Omit<Invocation, 'command'> {
  readonly now: number;
  readonly io: CliIo;
  readonly open: (asIf?: (manifest: RegistryManifest) => RegistryManifest) => Promise<Registry>;
}

function writeResult(registry: Registry, result: EditResult, { json, now, io }: Run): void {
  io.stdout.write(json ? formatResultJson(result, now) : formatResult(result, now, registry.kind));
}

async function edit(command: Extract<Command, { name: 'edit' }>, run: Run): Promise<void> {
  const registry = await run.open();
  const createIfMissing = registry.kind === 'files' && command.edit.op === 'add';
  const makesKey = command.edit.op === 'add' || command.edit.op === 'rotate';
  const newKey = makesKey ? keyMaker(run.io, keyPrefixFor(registry, run.keyPrefix)) : () => '';
  const [result] = await runEdits(registry, [editOf(command.edit, newKey, run.now)], run.io, createIfMissing);
  if (result !== undefined) writeResult(registry, result, run);
}

/**
 * `prune` of every app: each app's copy readers use is pruned where it is (an app left with no key goes, with the
 * copies a reshard left behind it), and a leftover copy quietly, in one write per shard that has expired keys.
 */
async function pruneAll(run: Run): Promise<void> {
  const registry = await run.open();
  const { documents } = await readAllDocuments(registry);
  const served = new Map(placeApps(registry.manifest, documents).apps.map((app) => [app.appId, app.served]));
  const edits: AppEdit<PruneAppResult>[] = [...documents].flatMap(([index, document]) =>
    [...document.keys()].map((appId) => ({
      appId,
      change: pruneChange(run.now, appId),
      ...(served.get(appId) === index ? {} : { shard: index }),
    })),
  );
  const results = await runEdits(registry, edits, run.io, false);
  const shown = results.flatMap((result, position) =>
    result === undefined || edits[position]?.shard !== undefined ? [] : [result],
  );
  const removed = shown.flatMap((result) => result.removed);
  const removedApps = shown.flatMap((result) => result.removedApps);
  if (registry.sharded) {
    removed.sort((a, b) => byCodeUnit(a.appId, b.appId));
    removedApps.sort(byCodeUnit);
  }
  writeResult(registry, { command: 'prune', removed, removedApps }, run);
}

async function where(appId: string, { open, json, io }: Run): Promise<void> {
  const registry = await open();
  const { documents } = await readShardsFor(registry, [{ appId }], {
    createIfMissing: true,
    checkBudget: false,
  });
  const search = shardsToSearch(registry.manifest, appId);
  const found = search.find((index) => documents.get(index)?.has(appId) === true);
  io.stdout.write(formatWhere(registry, appId, found, json));
}

async function list({ defaultLimit }: Extract<Command, { name: 'list' }>, run: Run): Promise<void> {
  const { open, json, now, io } = run;
  await streamList(await open(), { json, now, defaultLimit }, io);
}

async function apply(command: Extract<Command, { name: 'apply' }>, run: Run): Promise<void> {
  const { json, now, io } = run;
  // The file first: a bad one is refused before anything is read, let alone written.
  const requests = await readChangeFile(command.file, now, io);
  const createsKeys = checkKeysOut(requests, command, json);
  const registry = await run.open();
  const generateKey = keyMaker(io, keyPrefixFor(registry, run.keyPrefix));
  await runApply(registry, requests, command, { json, createsKeys, now }, { ...io, generateKey });
}

/** The reshard's options from the io: its waits, progress lines, and a countdown on a terminal. */
function reshardOptions(command: Extract<Command, { name: 'reshard' }>, io: CliIo): ReshardOptions {
  return {
    settleMs: command.settleMs,
    dryRun: command.dryRun,
    sleep: io.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    progress: (line) => io.stderr.write(`${line}\n`),
    ...(io.stderr.isTTY === true ? { countdown: (text: string) => io.stderr.write(text) } : {}),
    retry: io.retry,
  };
}

const removedFilesLine = (removed: readonly string[]): string =>
  removed.length === 0 ? '' : `removed ${counted(removed.length, 'shard file')} the shrink emptied\n`;

async function runReshard(command: Extract<Command, { name: 'reshard' }>, run: Run): Promise<void> {
  const { shards, dryRun } = command;
  const { target, json, io } = run;
  const local = target.kind === 'registry-file' ? target.path : undefined;
  const changesCount = shards !== undefined && local !== undefined;
  if (changesCount && !dryRun) await startFileReshard(local, shards);
  // A dry run of a local shard count plans on the manifest the real run would write first.
  const registry = await run.open(
    changesCount && dryRun ? (m: RegistryManifest) => reshardedManifest(local, m, shards) : undefined,
  );
  const report = await reshard(registry, reshardOptions(command, io));
  for (const warning of report.warnings) io.stderr.write(`warning: ${warning}\n`);
  const done = report.left.moves.length === 0 && report.left.leftovers.length === 0;
  const removed = done && !dryRun && local !== undefined ? await finishFileReshard(local) : [];
  io.stdout.write(formatReshard(registry, report, dryRun, json) + (json ? '' : removedFilesLine(removed)));
  if (!done && !dryRun) throw new ReportedExit();
}

async function leaked(command: Extract<Command, { name: 'leaked' }>, run: Run): Promise<void> {
  const { json, io, keyPrefix } = run;
  const input = await readLeakedInput(command, json, io.stdin, io.stderr);
  const registry = await run.open();
  const prefix = keyPrefixFor(registry, keyPrefix);
  const generateKey = keyMaker(io, prefix);
  await runLeaked(
    { registry, command, json, now: run.now, input, keyPrefix: prefix, errorLine },
    { ...io, generateKey },
  );
}

async function init({ shards, path }: Extract<Command, { name: 'init' }>, { io }: Run): Promise<void> {
  const manifest = await initRegistryFile(path, shards);
  const made = counted(manifest.shards, 'empty shard');
  io.stdout.write(`created registry file ${path}: ${made} (${manifest.shardIds.join(' ')})\n`);
}

function runCommand({ command, ...asked }: Invocation, io: CliIo): Promise<void> {
  const clients = registryClients(io);
  const run: Run = {
    ...asked,
    now: (io.now ?? Date.now)(),
    io,
    open: (asIf) => openRegistry(asked.target, clients, asIf),
  };
  switch (command.name) {
    case 'init':
      return init(command, run);
    case 'reshard':
      return runReshard(command, run);
    case 'apply':
      return apply(command, run);
    case 'leaked':
      return leaked(command, run);
    case 'list':
      return list(command, run);
    case 'where':
      return where(command.appId, run);
    case 'prune-all':
      return pruneAll(run);
    case 'edit':
      return edit(command, run);
  }
}

/**
 * The key CLI, callable in-process: parses argv, runs one command, writes to io.stdout / io.stderr, and returns
 * the exit code (0 done, 1 failed and nothing changed, 2 bad usage). Never throws, never prints a stack.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await runProgram(argv, io.env, { stdout: (text) => io.stdout.write(text) }, (invocation) =>
      runCommand(invocation, io),
    );
    return EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof ReportedExit) return error.code;
    io.stderr.write(errorLine(error));
    return exitCodeOf(error);
  }
}
