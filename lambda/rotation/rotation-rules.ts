import type { SecretsManagerRotationEvent, SecretsManagerRotationEventStep } from 'aws-lambda';
import {
  KeyDocumentError,
  parseKeyDocument,
  type DocumentApp,
  type DocumentKey,
  type KeyDocument,
} from '../../shared/keys/key-document';
import { holdsDigestKey } from '../../shared/keys/rotation';
import { describeKeyringProblem, MalformedSecretError, parseKeyring } from '../../shared/keys/keyring';

/**
 * The event Secrets Manager sends. `RotationToken` (newer than @types/aws-lambda's type) proves to Secrets
 * Manager where a PutSecretValue comes from; it is passed on and never logged.
 */
export interface RotationEvent extends SecretsManagerRotationEvent {
  readonly RotationToken?: string;
}

export type RotationStep = SecretsManagerRotationEventStep;

export const ROTATION_STEPS: readonly RotationStep[] = [
  'createSecret',
  'setSecret',
  'testSecret',
  'finishSecret',
];

export function isRotationStep(value: unknown): value is RotationStep {
  return typeof value === 'string' && (ROTATION_STEPS as readonly string[]).includes(value);
}

/** The rotation must not go on. Messages name versions, apps and steps, never a key or the secret's value. */
export class RotationError extends Error {
  override readonly name = 'RotationError';
}

export const STAGE = { current: 'AWSCURRENT', pending: 'AWSPENDING' } as const;

/** What DescribeSecret says about the secret's rotation. */
export interface RotationState {
  readonly rotationEnabled: boolean;
  readonly versionIdsToStages: Readonly<Record<string, readonly string[]>>;
}

export type StepDecision =
  | { readonly action: 'run' }
  /** The token's version already holds AWSCURRENT: this rotation is complete. */
  | { readonly action: 'skip'; readonly pendingLabelLeft: boolean };

/**
 * The checks every step makes first, as AWS's sample rotation functions do: rotation is enabled, the token
 * names a version of the secret, and that version is the pending one, unless it is already current, in which
 * case there is nothing left to do.
 */
export function decideStep(state: RotationState, token: string): StepDecision {
  if (!state.rotationEnabled) throw new RotationError('rotation is not enabled for this secret');
  const stages = Object.hasOwn(state.versionIdsToStages, token) ? state.versionIdsToStages[token] : undefined;
  if (stages === undefined) throw new RotationError(`version ${token} is not a version of this secret`);
  if (stages.includes(STAGE.current)) {
    return { action: 'skip', pendingLabelLeft: stages.includes(STAGE.pending) };
  }
  if (!stages.includes(STAGE.pending)) {
    throw new RotationError(`version ${token} is not labelled ${STAGE.pending} for rotation`);
  }
  return { action: 'run' };
}

function sameKey(a: DocumentKey | undefined, b: DocumentKey | undefined): boolean {
  return a?.stored === b?.stored && a?.expires === b?.expires;
}

function sameKeys(a: readonly DocumentKey[], b: readonly DocumentKey[]): boolean {
  return a.length === b.length && a.every((key, index) => sameKey(key, b[index]));
}

function sameCidrs(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((cidr, index) => cidr === b[index]);
}

/**
 * Whether `pending` may replace `current` for one app: its allowlist unchanged, and its keys unchanged or (for an
 * app without `sha256:` keys) a non-empty tail of the current keys, the newest included, followed by exactly one
 * key the app did not have. Anything else means the current version changed since the pending one was made (an
 * operator added or revoked a key meanwhile) or the pending one is wrong; moving AWSCURRENT would then lose or
 * resurrect a key.
 */
function isRotationOfApp(current: DocumentApp, pending: DocumentApp): boolean {
  if (!sameCidrs(current.allowedCidrs, pending.allowedCidrs)) return false;
  if (sameKeys(current.keys, pending.keys)) return true;
  if (holdsDigestKey(current.keys) || holdsDigestKey(pending.keys) || pending.keys.length < 2) return false;
  const fresh = pending.keys[pending.keys.length - 1];
  if (fresh === undefined || current.keys.some((key) => key.stored === fresh.stored)) return false;
  const kept = pending.keys.slice(0, -1);
  return sameKeys(kept, current.keys.slice(-kept.length));
}

/** The current version is the base of the rotation: if the strict model cannot read it, nothing can be checked. */
function parseCurrent(text: string): KeyDocument {
  try {
    return parseKeyDocument(text);
  } catch (error) {
    if (error instanceof KeyDocumentError) throw new RotationError(`the current version: ${error.message}`);
    throw error;
  }
}

/**
 * Why the pending version may not become current; empty when it may. It must read without a single problem,
 * exactly as the payment Lambda reads it, keep every app of the current version, add none, and change each app
 * only as one rotation does. Reasons name valid app ids and entry positions, never keys. Throws RotationError when the current version itself
 * cannot be read by the strict model, as there is then nothing to check against.
 */
export function pendingVersionProblems(currentText: string, pendingText: string): string[] {
  let problems: string[];
  try {
    problems = parseKeyring(pendingText).problems.map(describeKeyringProblem);
  } catch (error) {
    if (error instanceof MalformedSecretError) {
      return [`the pending version does not parse: ${error.message}`];
    }
    throw error;
  }
  if (problems.length > 0) return problems;

  const current = parseCurrent(currentText);
  let pending: KeyDocument;
  try {
    pending = parseKeyDocument(pendingText);
  } catch (error) {
    if (error instanceof KeyDocumentError) return [`the pending version: ${error.message}`];
    throw error;
  }
  for (const [appId, currentKeys] of current) {
    const pendingKeys = pending.get(appId);
    if (pendingKeys === undefined) problems.push(`app ${appId} is missing from the pending version`);
    else if (!isRotationOfApp(currentKeys, pendingKeys)) {
      problems.push(`app ${appId}: the pending keys are not one rotation of the current keys`);
    }
  }
  for (const appId of pending.keys()) {
    if (!current.has(appId))
      problems.push(`app ${appId} is in the pending version but not in the current one`);
  }
  return problems;
}
