import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  KeyDocumentError,
  listApps,
  MalformedEntryError,
  parseKeyDocument,
} from '../../shared/keys/key-document';
import { generateKey } from '../../shared/keys/key-material';
import { createOperatorSecretsManagerClient } from '../common/aws-settings';
import { errorLine as toolErrorLine, EXIT_CODES, exitCodeOf, UsageError } from '../common/exit';
import type { Env, ToolIo } from '../common/tool-io';
import { parseInvocation, USAGE, type Command, type Target } from './args';
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
import { ConflictError, editKeys, type Change, type EditOptions } from './edit';
import { FileStore } from './file-store';
import { KeyStoreError, type KeyStore } from './key-store';
import { formatList, formatListJson, formatResult, formatResultJson, type KeyStoreKind } from './output';
import { SecretsManagerStore } from './secrets-manager-store';
import { SecretTooLargeError } from './size-guard';

export interface CliIo extends ToolIo {
  /** Test seams; the defaults are the real thing. */
  readonly createSecretsManagerClient?: (env: Env) => SecretsManagerClient;
  readonly generateKey?: () => string;
  /** The clock expiries are set and judged by, read once per command. */
  readonly now?: () => number;
  readonly editOptions?: Omit<EditOptions, 'createIfMissing'>;
}

function storeKind(target: Target): KeyStoreKind {
  return target.kind === 'file' ? 'file' : 'secret';
}

function openStore(target: Target, io: CliIo): KeyStore {
  if (target.kind === 'file') return new FileStore(target.path);
  const client =
    io.createSecretsManagerClient?.(io.env) ?? createOperatorSecretsManagerClient(io.env, io.awsCallBounds);
  return new SecretsManagerStore(target.secretId, client);
}

async function list(
  store: KeyStore,
  command: Extract<Command, { name: 'list' }>,
  json: boolean,
  now: number,
  kind: KeyStoreKind,
): Promise<string> {
  const { text } = await store.read();
  if (text === undefined) throw new KeyStoreError(`${store.description} does not exist (add-app creates it)`);
  const apps = listApps(parseKeyDocument(text));
  return json
    ? formatListJson(apps, now, command.defaultLimit)
    : formatList(apps, now, command.defaultLimit, kind);
}

/**
 * `now` plus `ms`, when `ms` is given, in whole seconds (rounded down, so a key never outlives what was asked):
 * expiries then read `2026-12-24T00:00:00Z`, not `...00.123Z`.
 */
function after(now: number, ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : Math.floor((now + ms) / 1_000) * 1_000;
}

function changeFor(
  command: Exclude<Command, { name: 'list' }>,
  newKey: () => string,
  now: number,
): Change<EditResult> {
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

const KNOWN_FAILURES = [UsageError, KeyDocumentError, KeyStoreError, ConflictError, SecretTooLargeError];

/** One line, whatever went wrong (see tools/common/exit.ts), never a key. */
export function errorLine(error: unknown): string {
  // The operator is editing this very secret: name the app of a malformed entry, which logs never do.
  const shown = error instanceof MalformedEntryError ? new KeyDocumentError(error.forOperator()) : error;
  return toolErrorLine(shown, KNOWN_FAILURES);
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
    const { command, target, json } = invocation;
    const store = openStore(target, io);
    const now = (io.now ?? Date.now)();
    if (command.name === 'list') {
      io.stdout.write(await list(store, command, json, now, storeKind(target)));
      return EXIT_CODES.ok;
    }

    const outcome = await editKeys(store, changeFor(command, io.generateKey ?? generateKey, now), {
      ...io.editOptions,
      createIfMissing: target.kind === 'file' && command.name === 'add-app',
    });
    for (const warning of outcome.warnings) io.stderr.write(`warning: ${warning}\n`);
    if (outcome.attempts > 1) {
      io.stderr.write(
        `note: the keys changed while this command ran; applied on attempt ${outcome.attempts}\n`,
      );
    }
    io.stdout.write(
      json ? formatResultJson(outcome.result, now) : formatResult(outcome.result, now, storeKind(target)),
    );
    return EXIT_CODES.ok;
  } catch (error) {
    io.stderr.write(errorLine(error));
    return exitCodeOf(error);
  }
}
