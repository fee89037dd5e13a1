import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  KeyDocumentError,
  listKeyIds,
  MalformedEntryError,
  parseKeyDocument,
} from '../../shared/keys/key-document';
import { generateKey } from '../../shared/keys/key-material';
import { createOperatorSecretsManagerClient } from '../common/aws-settings';
import { errorLine as toolErrorLine, EXIT_CODES, exitCodeOf, UsageError } from '../common/exit';
import type { Env, ToolIo } from '../common/tool-io';
import { parseInvocation, USAGE, type Command, type Target } from './args';
import {
  formatList,
  formatListJson,
  formatResult,
  formatResultJson,
  freshKey,
  newKeyChange,
  removeAppChange,
  revokeChange,
  type EditResult,
} from './commands';
import { ConflictError, editKeys, type Change, type EditOptions } from './edit';
import { FileStore } from './file-store';
import { KeyStoreError, type KeyStore } from './key-store';
import { SecretsManagerStore } from './secrets-manager-store';

export interface CliIo extends ToolIo {
  /** Test seams; the defaults are the real thing. */
  readonly createSecretsManagerClient?: (env: Env) => SecretsManagerClient;
  readonly generateKey?: () => string;
  readonly editOptions?: Omit<EditOptions, 'createIfMissing'>;
}

function openStore(target: Target, io: CliIo): KeyStore {
  if (target.kind === 'file') return new FileStore(target.path);
  const client =
    io.createSecretsManagerClient?.(io.env) ?? createOperatorSecretsManagerClient(io.env, io.awsCallBounds);
  return new SecretsManagerStore(target.secretId, client);
}

async function list(store: KeyStore, json: boolean): Promise<string> {
  const { text } = await store.read();
  if (text === undefined) throw new KeyStoreError(`${store.description} does not exist (add-app creates it)`);
  const apps = listKeyIds(parseKeyDocument(text));
  return json ? formatListJson(apps) : formatList(apps);
}

function changeFor(command: Exclude<Command, { name: 'list' }>, newKey: () => string): Change<EditResult> {
  switch (command.name) {
    case 'add-app':
    case 'rotate':
      return newKeyChange(command.name, command.appId, freshKey(newKey(), command.hash), command.hash);
    case 'revoke':
      return revokeChange(command.appId, command.keyId, command.force);
    case 'remove-app':
      return removeAppChange(command.appId);
  }
}

const KNOWN_FAILURES = [UsageError, KeyDocumentError, KeyStoreError, ConflictError];

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
    if (command.name === 'list') {
      io.stdout.write(await list(store, json));
      return EXIT_CODES.ok;
    }

    const outcome = await editKeys(store, changeFor(command, io.generateKey ?? generateKey), {
      ...io.editOptions,
      createIfMissing: target.kind === 'file' && command.name === 'add-app',
    });
    for (const warning of outcome.warnings) io.stderr.write(`warning: ${warning}\n`);
    if (outcome.attempts > 1) {
      io.stderr.write(
        `note: the keys changed while this command ran; applied on attempt ${outcome.attempts}\n`,
      );
    }
    io.stdout.write(json ? formatResultJson(outcome.result) : formatResult(outcome.result));
    return EXIT_CODES.ok;
  } catch (error) {
    io.stderr.write(errorLine(error));
    return exitCodeOf(error);
  }
}
