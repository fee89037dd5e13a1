import { DEMO_APP_ID } from '../../shared/keys/app-id';
import { MalformedSecretError } from '../../shared/keys/keyring';

/** The two calls placing the demo key needs, on the secret named (a real client, or a test's). */
export interface DemoKeySecrets {
  /** The secret's AWSCURRENT SecretString. */
  read(secretId: string): Promise<string>;
  /** A new AWSCURRENT version; `token` makes a retried write the same version. */
  write(secretId: string, secretString: string, token: string): Promise<void>;
}

export interface DemoKeyPlacement {
  /** Shard 0: the new keys secret, where Secrets Manager generated the demo key. */
  readonly shardZero: string;
  /** Demo's home shard under the stack's shard count, when that is not shard 0. */
  readonly home: string;
}

/** What placing did; never the key. */
export type DemoKeyOutcome =
  | 'copied'
  /** The home shard holds apps already (a stack upgraded, not created): a reshard places demo with the others. */
  | 'home-not-empty'
  /** Shard 0 holds no demo key (removed, or never generated): nothing to place. */
  | 'no-demo-key';

/**
 * Copies the demo key Secrets Manager generated in shard 0 into demo's home shard, once, when the stack is created:
 * the home shard is then the `{}` the stack wrote, and nothing else writes it yet. Anything else in it means the stack
 * existed before, and its apps are placed by `keys reshard`; it is never overwritten. Shard 0's copy stays: shard 0 is
 * where the README reads the demo key from (KeysSecretArn), and a reshard removes it like any app outside its home.
 */
export async function placeDemoKey(
  secrets: DemoKeySecrets,
  placement: DemoKeyPlacement,
  token: string,
): Promise<DemoKeyOutcome> {
  const demoKey = demoKeyIn(await secrets.read(placement.shardZero));
  if (demoKey === undefined) return 'no-demo-key';
  if (!isEmptyKeyring(await secrets.read(placement.home))) return 'home-not-empty';
  await secrets.write(placement.home, JSON.stringify({ [DEMO_APP_ID]: demoKey }), token);
  return 'copied';
}

/** JSON.parse's own message quotes the text, which holds keys: never let it reach a log line. */
function parseSecret(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedSecretError('secret is not JSON');
  }
}

function demoKeyIn(text: string): unknown {
  const parsed = parseSecret(text);
  if (typeof parsed !== 'object' || parsed === null || !Object.hasOwn(parsed, DEMO_APP_ID)) return undefined;
  return (parsed as Readonly<Record<string, unknown>>)[DEMO_APP_ID];
}

function isEmptyKeyring(text: string): boolean {
  const parsed = parseSecret(text);
  return (
    typeof parsed === 'object' &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.keys(parsed).length === 0
  );
}
