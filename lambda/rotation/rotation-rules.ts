import type { SecretsManagerRotationEvent, SecretsManagerRotationEventStep } from 'aws-lambda';
import {
  expiresAtOf,
  isExpired,
  keyIdOf,
  KeyDocumentError,
  parseKeyDocument,
  type DocumentApp,
  type DocumentKey,
  type DocumentRateLimit,
  type KeyDocument,
} from '../../shared/keys/key-document';
import {
  freshKeyExpiry,
  holdsDigestKey,
  supersededKeyLifetimeMs,
  type RotationPolicy,
} from '../../shared/keys/rotation';
import { parseTimestamp } from '../../shared/keys/timestamp';
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

function sameRateLimit(a: DocumentRateLimit | undefined, b: DocumentRateLimit | undefined): boolean {
  return a?.perSecond === b?.perSecond && a?.burst === b?.burst;
}

/**
 * The steps of one rotation may run on different Lambda instances, minutes or (when Secrets Manager retries) hours
 * apart, and their clocks may differ slightly. The check leans this far towards accepting: far more than any clock
 * difference, far less than the shortest period (4 hours), and never enough to keep a key alive.
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;

/** When and by which rules the pending version is checked. */
export interface PendingCheck {
  readonly policy: RotationPolicy;
  /** The checking step's clock, epoch ms: the pending version was made no later than this. */
  readonly now: number;
}

/**
 * A kept key expires no later than it does in the current version, and no later than a rotation made now would
 * have it expire: a rotation only ever shortens a key's life, and always to within (keep - 1) periods.
 */
function expiryProblem(current: DocumentKey, kept: DocumentKey, latest: number): string | undefined {
  const at = expiresAtOf(kept);
  const was = expiresAtOf(current);
  if (at === undefined) return 'has no expiry, though a rotation gives every superseded key one';
  if (was !== undefined && at > was) return 'expires later than in the current version';
  if (at > latest) return 'expires later than a rotation made now allows';
  return undefined;
}

/**
 * Why `pending` is not what one rotation makes of `current` for one app, or undefined when it is (or when the app
 * is unchanged, as rotation leaves digest apps, apps with no valid key, and every app when Secrets Manager only tests
 * the configuration). A rotated app's pending keys must be:
 * - the current keys in their order, where only keys expired by now may be missing (the rotation pruned them, or
 *   they were valid when it ran), and at least one is kept;
 * - each with its current expiry or an earlier one no later than now + (keep - 1) periods;
 * - followed by exactly one key the app did not have, without expiry unless every current key has one, then
 *   expiring with the last of them (freshKeyExpiry);
 * with the allowlist unchanged. Anything else means the current version changed since the pending one was made (an
 * operator added, revoked or expired a key meanwhile) or the pending one is wrong: moving AWSCURRENT would then
 * lose an operator's change or resurrect a key. Reasons name key ids, never keys.
 */
function rotationProblem(
  current: DocumentApp,
  pending: DocumentApp,
  check: PendingCheck,
): string | undefined {
  if (!sameCidrs(current.allowedCidrs, pending.allowedCidrs)) return 'its allowlist changed';
  if (!sameRateLimit(current.rateLimit, pending.rateLimit)) return 'its rate limit changed';
  if (sameKeys(current.keys, pending.keys)) return undefined;
  if (holdsDigestKey(current.keys)) return 'it holds a sha256: key, which rotation leaves unchanged';
  const fresh = pending.keys[pending.keys.length - 1];
  if (
    fresh === undefined ||
    holdsDigestKey([fresh]) ||
    current.keys.some((key) => keyIdOf(key.stored) === keyIdOf(fresh.stored))
  ) {
    return 'its last key is not one it did not have';
  }
  const kept = pending.keys.slice(0, -1);
  if (kept.length === 0) return 'no current key is kept (rotation leaves an app with no valid key as it is)';
  const wantedExpiry = freshKeyExpiry(current.keys);
  if (expiresAtOf(fresh) !== (wantedExpiry === undefined ? undefined : parseTimestamp(wantedExpiry))) {
    return 'its fresh key does not expire as a rotation sets it';
  }
  const unknown = kept.find((key) => !current.keys.some((known) => known.stored === key.stored));
  if (unknown !== undefined) return `key ${keyIdOf(unknown.stored)} is not in the current version`;

  const latest = check.now + supersededKeyLifetimeMs(check.policy) + CLOCK_SKEW_ALLOWANCE_MS;
  const expiredBy = check.now + CLOCK_SKEW_ALLOWANCE_MS;
  let next = 0;
  for (const key of current.keys) {
    const candidate = kept[next];
    if (candidate?.stored === key.stored) {
      const problem = expiryProblem(key, candidate, latest);
      if (problem !== undefined) return `key ${keyIdOf(key.stored)} ${problem}`;
      next += 1;
    } else if (!isExpired(key, expiredBy)) {
      return kept.some((other) => other.stored === key.stored)
        ? 'its keys are not in their current order'
        : `key ${keyIdOf(key.stored)} is still valid but missing`;
    }
  }
  if (next !== kept.length) return 'its keys are not in their current order';
  return undefined;
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
 * only as one rotation does (rotationProblem), judged at `check.now`. Reasons name valid app ids, key ids and entry
 * positions, never keys. Throws RotationError when the current version itself cannot be read by the strict model,
 * as there is then nothing to check against.
 */
export function pendingVersionProblems(
  currentText: string,
  pendingText: string,
  check: PendingCheck,
): string[] {
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
  for (const [appId, currentApp] of current) {
    const pendingApp = pending.get(appId);
    if (pendingApp === undefined) {
      problems.push(`app ${appId} is missing from the pending version`);
      continue;
    }
    const problem = rotationProblem(currentApp, pendingApp, check);
    if (problem !== undefined) {
      problems.push(`app ${appId}: the pending keys are not one rotation of the current keys (${problem})`);
    }
  }
  for (const appId of pending.keys()) {
    if (!current.has(appId))
      problems.push(`app ${appId} is in the pending version but not in the current one`);
  }
  return problems;
}
