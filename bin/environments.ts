/**
 * Settings per environment, kept in cdk.json so that a deploy without flags cannot drop them:
 *
 *   "context": { "environments": { "production": { "wafRateLimit": 5000, "domainName": "..." } } }
 *
 * `-c env=production` applies that entry. A key set anywhere else in the context (`-c` on the command line, or the
 * top level of cdk.json's context) wins over the entry. The merged context then goes through readContext, so every
 * key of an entry is checked like any other context key.
 */
import { CONTEXT_SETTINGS, ContextError, ENVIRONMENT_NAME, nearestKey } from './context';
import { nearest } from '../shared/nearest';

/** The context key that holds the entries. */
export const ENVIRONMENTS_KEY = 'environments';
/** The context key that picks an entry (and names the stack). */
const ENV_KEY = 'env';

type Context = Readonly<Record<string, unknown>>;

export interface EnvironmentContext {
  /** The context readContext reads: the entry's keys filled in, `environments` itself taken out. */
  readonly context: Context;
  /** The keys whose value came from the entry, and the entry's label (`environments.production`). */
  readonly fromEntry: ReadonlyMap<string, string>;
}

function isObject(value: unknown): value is Context {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isUnset(raw: unknown): boolean {
  return raw === undefined || raw === null || raw === '';
}

function describe(raw: unknown): string {
  return typeof raw === 'string' ? `"${raw}"` : JSON.stringify(raw);
}

/** One line per problem with the entries themselves: their shape, their names, their keys. */
function entryProblems(environments: Context): string[] {
  const problems: string[] = [];
  const known = new Set(CONTEXT_SETTINGS.map((row) => row.key));
  for (const [name, entry] of Object.entries(environments)) {
    const label = `${ENVIRONMENTS_KEY}.${name}`;
    if (!ENVIRONMENT_NAME.pattern.test(name)) {
      problems.push(
        `context "${ENVIRONMENTS_KEY}" has an entry named "${name}", which no env can select: an environment name must be ${ENVIRONMENT_NAME.description}`,
      );
      continue;
    }
    if (!isObject(entry)) {
      problems.push(
        `context "${label}" must be an object of context keys and values, got ${describe(entry)}`,
      );
      continue;
    }
    for (const key of Object.keys(entry)) {
      if (key === ENV_KEY || key === ENVIRONMENTS_KEY) {
        problems.push(
          `context "${key}" in ${label} cannot be set there: the entry is chosen by "${ENV_KEY}"`,
        );
      } else if (!known.has(key)) {
        problems.push(
          `context "${key}" in ${label} is not a setting of this app; did you mean "${nearestKey(key)}"?`,
        );
      }
    }
  }
  return problems;
}

/**
 * Applies cdk.json's entry for the chosen `env` under the rest of the context. Throws a ContextError, one line
 * per problem, when `environments` is malformed, holds an unknown key, or `env` names none of its entries.
 * Without `environments`, the context passes through as it is.
 */
export function applyEnvironment(context: Context): EnvironmentContext {
  const { [ENVIRONMENTS_KEY]: environments, ...rest } = context;
  if (isUnset(environments)) return { context: rest, fromEntry: new Map() };
  if (!isObject(environments)) {
    throw new ContextError([
      `context "${ENVIRONMENTS_KEY}" must be an object mapping environment names to their settings, got ${describe(environments)}`,
    ]);
  }

  const problems = entryProblems(environments);
  const env = rest[ENV_KEY];
  const names = Object.keys(environments);
  if (typeof env === 'string' && env !== '' && !Object.hasOwn(environments, env)) {
    const known = names.length === 0 ? 'none' : names.join(', ');
    const hint = names.length === 0 ? '' : `; did you mean "${nearest(env, names)}"?`;
    problems.push(
      `context "${ENV_KEY}" is "${env}", which names no entry of "${ENVIRONMENTS_KEY}" in cdk.json (known: ${known})${hint}`,
    );
  }
  if (problems.length > 0) throw new ContextError(problems);

  if (typeof env !== 'string' || env === '') return { context: rest, fromEntry: new Map() };
  const entry = environments[env] as Context;
  const merged: Record<string, unknown> = { ...rest };
  const fromEntry = new Map<string, string>();
  for (const [key, value] of Object.entries(entry)) {
    if (!isUnset(merged[key])) continue;
    merged[key] = value;
    fromEntry.set(key, `${ENVIRONMENTS_KEY}.${env}`);
  }
  return { context: merged, fromEntry };
}
