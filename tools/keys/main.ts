import { readFile } from 'node:fs/promises';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { errorCode } from '../../shared/errors';
import {
  KeyDocumentError,
  listApps,
  MalformedEntryError,
  type DocumentApp,
} from '../../shared/keys/key-document';
import { generateKey } from '../../shared/keys/key-material';
import { shardsToSearch } from '../../shared/keys/registry';
import {
  createOperatorCloudFormationClient,
  createOperatorSecretsManagerClient,
} from '../common/aws-settings';
import { errorLine as toolErrorLine, EXIT_CODES, exitCodeOf, UsageError } from '../common/exit';
import { StackReadError } from '../common/stack-outputs';
import type { Env, ToolIo } from '../common/tool-io';
import { planApply, planChange, runApply } from './apply';
import { parseInvocation, USAGE, type Command, type Target } from './args';
import { parseChangeFile } from './change-file';
import {
  expireChange,
  freshKey,
  limitChange,
  networkChange,
  newKeyChange,
  pruneChange,
  removeAppChange,
  revokeChange,
  type EditResult,
} from './commands';
import { ConflictError, ShardError, unusedVersionsText, type Change, type EditOptions } from './edit';
import { fileKeySink, streamKeySink, type KeySink } from './key-sink';
import { KeyStoreError } from './key-store';
import { formatList, formatListJson, formatResult, formatResultJson, type KeyStoreKind } from './output';
import { placeApps } from './placement';
import { openRegistry, type Registry, type RegistryClients } from './registry';
import { documentOfShard, editApp, pruneRegistry, readAllDocuments } from './registry-edit';
import { finishFileReshard, initRegistryFile, startFileReshard } from './registry-file';
import {
  formatApply,
  formatDryRun,
  formatFileProblems,
  formatPlanProblems,
  formatReshard,
  formatWhere,
  placementNotes,
} from './registry-output';
import { reshard } from './reshard';
import { SecretTooLargeError } from './size-guard';

export interface CliIo extends ToolIo {
  /** Test seams; the defaults are the real thing. */
  readonly createSecretsManagerClient?: (env: Env) => SecretsManagerClient;
  readonly createCloudFormationClient?: (
    env: Env,
    secretsManager: SecretsManagerClient,
  ) => CloudFormationClient;
  readonly generateKey?: () => string;
  /** The clock expiries are set and judged by, read once per command. */
  readonly now?: () => number;
  readonly editOptions?: Omit<EditOptions, 'createIfMissing'>;
  /** How reshard waits between copying and removing; default a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The clients a registry needs, each made once and only when it is needed. */
function registryClients(io: CliIo, now: () => number): RegistryClients {
  let secretsManager: SecretsManagerClient | undefined;
  let cloudFormation: CloudFormationClient | undefined;
  const secretsManagerClient = (): SecretsManagerClient =>
    (secretsManager ??=
      io.createSecretsManagerClient?.(io.env) ??
      createOperatorSecretsManagerClient(io.env, io.awsCallBounds));
  return {
    now,
    secretsManager: secretsManagerClient,
    cloudFormation: () =>
      (cloudFormation ??=
        io.createCloudFormationClient?.(io.env, secretsManagerClient()) ??
        createOperatorCloudFormationClient(secretsManagerClient(), io.env, io.awsCallBounds)),
  };
}

/** Whose default limit applies: the local server's (a key file) or the stack's (a secret), for the CLI's words. */
function storeKind(registry: Pick<Registry, 'kind'>): KeyStoreKind {
  return registry.kind === 'files' ? 'file' : 'secret';
}

async function list(
  registry: Registry,
  command: Extract<Command, { name: 'list' }>,
  json: boolean,
  now: number,
  io: CliIo,
): Promise<string> {
  const { documents } = await readAllDocuments(registry);
  const placement = placeApps(registry.manifest, documents);
  const served = new Map<string, DocumentApp>();
  for (const app of placement.apps) {
    const index = app.served ?? app.copies[0];
    const entry = index === undefined ? undefined : documents.get(index)?.get(app.appId);
    if (entry !== undefined) served.set(app.appId, entry);
  }
  for (const line of placementNotes(registry, placement)) io.stderr.write(line);
  const apps = listApps(served);
  return json
    ? formatListJson(apps, now, command.defaultLimit)
    : formatList(apps, now, command.defaultLimit, storeKind(registry));
}

async function where(registry: Registry, appId: string, json: boolean): Promise<string> {
  const search = shardsToSearch(registry.manifest, appId);
  const snapshots = await registry.readShards(search);
  const found = search.find((index) => {
    const snapshot = snapshots.get(index);
    return snapshot !== undefined && documentOfShard(registry, index, snapshot, true).has(appId);
  });
  return formatWhere(registry, appId, found, json);
}

/**
 * `now` plus `ms`, when `ms` is given, in whole seconds (rounded down, so a key never outlives what was asked):
 * expiries then read `2026-12-24T00:00:00Z`, not `...00.123Z`.
 */
function after(now: number, ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : Math.floor((now + ms) / 1_000) * 1_000;
}

type AppCommand = Exclude<Command, { name: 'list' | 'where' | 'apply' | 'reshard' | 'init' }>;

function changeFor(command: AppCommand, newKey: () => string, now: number): Change<EditResult> {
  switch (command.name) {
    case 'add-app':
    case 'rotate': {
      const expiresAt = after(now, command.expiresInMs);
      const othersExpireBy = command.name === 'rotate' ? after(now, command.graceMs) : undefined;
      return newKeyChange({
        command: command.name,
        appId: command.appId,
        fresh: freshKey(newKey(), command.hash),
        now,
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(othersExpireBy === undefined ? {} : { othersExpireBy }),
      });
    }
    case 'revoke':
      return revokeChange(command.appId, command.keyId, command.force);
    case 'remove-app':
      return removeAppChange(command.appId);
    case 'expire': {
      const { expiry } = command;
      const at = expiry.kind === 'in' ? after(now, expiry.ms) : expiry.kind === 'at' ? expiry.at : undefined;
      return expireChange(command.appId, command.keyId, at);
    }
    case 'prune':
      return pruneChange(now, command.appId);
    case 'allow':
      return networkChange(
        command.appId,
        command.cidrs === 'any' ? { kind: 'allow-any' } : { kind: 'allow', cidrs: command.cidrs },
      );
    case 'disallow':
      return networkChange(command.appId, { kind: 'disallow', cidrs: command.cidrs });
    case 'limit':
      return limitChange(command.appId, command.limit);
  }
}

/** A run whose lines are already written: only the exit code is left to give. */
class ReportedFailure extends Error {
  override readonly name = 'ReportedFailure';
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

async function readApplyFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    throw new UsageError(`cannot read the apply file ${path}${code === undefined ? '' : ` (${code})`}`);
  }
}

async function apply(
  target: Target,
  clients: RegistryClients,
  command: Extract<Command, { name: 'apply' }>,
  json: boolean,
  now: number,
  io: CliIo,
): Promise<void> {
  // The file first: a bad one is refused before anything is read, let alone written.
  const reading = parseChangeFile(await readApplyFile(command.file), now);
  if (!reading.ok) {
    io.stderr.write(formatFileProblems(command.file, reading.problems));
    throw new ReportedFailureUsage();
  }
  const createsKeys = reading.changes.some((change) => change.op === 'add' || change.op === 'rotate');
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
  const registry = await openRegistry(target, clients);
  const planned = reading.changes.map((change) => planChange(change, io.generateKey ?? generateKey, now));
  const plan = await planApply(registry, planned);
  if (plan.problems.length > 0) {
    io.stderr.write(formatPlanProblems(command.file, plan));
    throw new ReportedFailure();
  }
  // With the keys on standard output, the report goes to standard error.
  const report = command.keysOut === '-' ? io.stderr : io.stdout;
  if (command.dryRun) {
    report.write(formatDryRun(registry, plan, json));
    return;
  }
  let sink: KeySink | undefined;
  if (createsKeys)
    sink = command.keysOut === '-' ? streamKeySink(io.stdout) : await fileKeySink(command.keysOut ?? '');
  const run = await runApply(registry, plan, sink, now, io.editOptions ?? {});
  const keys = run.outcomes.reduce(
    (sum, outcome) => sum + (outcome.status === 'failed' ? 0 : outcome.keys),
    0,
  );
  await sink?.close(keys);
  for (const warning of run.warnings) io.stderr.write(`warning: ${warning}\n`);
  if (run.unusedVersions > 0) {
    io.stderr.write(
      `note: the keys changed while apply ran${unusedVersionsText(run.unusedVersions, 'the shards written')}\n`,
    );
  }
  report.write(formatApply(registry, plan, run, { keysTo: sink?.description, keys }, json));
  if (run.outcomes.some((outcome) => outcome.status === 'failed')) throw new ReportedFailure();
}

/** An apply file with problems: bad input (exit 2), its lines already written. */
class ReportedFailureUsage extends UsageError {
  override readonly name = 'ReportedFailureUsage';
}

async function runReshard(
  target: Target,
  command: Extract<Command, { name: 'reshard' }>,
  json: boolean,
  clients: RegistryClients,
  io: CliIo,
): Promise<void> {
  if (command.shards !== undefined && target.kind === 'registry-file' && !command.dryRun) {
    await startFileReshard(target.path, command.shards);
  }
  const registry = await openRegistry(target, clients);
  const sleep = io.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const report = await reshard(registry, {
    ...(command.settleMs === undefined ? {} : { settleMs: command.settleMs }),
    dryRun: command.dryRun,
    sleep,
    progress: (line) => io.stderr.write(`${line}\n`),
    editOptions: io.editOptions ?? {},
  });
  for (const warning of report.warnings) io.stderr.write(`warning: ${warning}\n`);
  const done = report.left.moves.length === 0 && report.left.leftovers.length === 0;
  if (done && !command.dryRun && target.kind === 'registry-file') await finishFileReshard(target.path);
  io.stdout.write(formatReshard(registry, report, command.dryRun, json));
  if (!done && !command.dryRun) throw new ReportedFailure();
}

async function runCommand(command: Command, target: Target, json: boolean, io: CliIo): Promise<void> {
  const now = (io.now ?? Date.now)();
  const clients = registryClients(io, () => (io.now ?? Date.now)());
  if (command.name === 'init') {
    if (target.kind !== 'registry-file') throw new UsageError('init needs --registry-file <path>');
    const manifest = await initRegistryFile(target.path, command.shards);
    io.stdout.write(
      `created registry file ${target.path}: ${manifest.shards} empty shard${manifest.shards === 1 ? '' : 's'} (${manifest.shardIds.join(' ')})\n`,
    );
    return;
  }
  if (command.name === 'reshard') return runReshard(target, command, json, clients, io);
  if (command.name === 'apply') return apply(target, clients, command, json, now, io);
  const registry = await openRegistry(target, clients);
  switch (command.name) {
    case 'list':
      io.stdout.write(await list(registry, command, json, now, io));
      return;
    case 'where':
      io.stdout.write(await where(registry, command.appId, json));
      return;
    default:
      break;
  }
  const change = changeFor(command, io.generateKey ?? generateKey, now);
  const options = {
    ...io.editOptions,
    createIfMissing: registry.kind === 'files' && command.name === 'add-app',
  };
  const outcome =
    command.appId === undefined
      ? await pruneRegistry(registry, change as Change<Extract<EditResult, { command: 'prune' }>>, options)
      : await editApp(registry, command.appId, change, { ...options, adding: command.name === 'add-app' });
  for (const warning of outcome.warnings) io.stderr.write(`warning: ${warning}\n`);
  if (outcome.attempts > 1) {
    const label = registry.sharded ? "the app's shard" : registry.shard(0).store.description;
    io.stderr.write(
      `note: the keys changed while this command ran; applied on attempt ${outcome.attempts}` +
        `${unusedVersionsText(outcome.unusedVersions, label)}\n`,
    );
  }
  io.stdout.write(
    json ? formatResultJson(outcome.result, now) : formatResult(outcome.result, now, storeKind(registry)),
  );
}

/**
 * The key CLI, callable in-process: parses argv, runs one command, writes to io.stdout / io.stderr, and returns
 * the exit code (0 done, 1 failed and nothing changed, 2 bad usage). Never throws, never prints a stack.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const invocation = parseInvocation(argv, io.env);
    if (invocation.kind === 'help') {
      io.stdout.write(USAGE);
      return EXIT_CODES.ok;
    }
    await runCommand(invocation.command, invocation.target, invocation.json, io);
    return EXIT_CODES.ok;
  } catch (error) {
    if (!(error instanceof ReportedFailure) && !(error instanceof ReportedFailureUsage))
      io.stderr.write(errorLine(error));
    return exitCodeOf(error);
  }
}
