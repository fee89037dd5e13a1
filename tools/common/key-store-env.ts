/**
 * The variables that say where the keys are, read alike by the key CLI and the local server, so one setting
 * points both. KEYS_SECRET_ID is also the payment Lambda's (ENV.secretId in lambda/payment/settings.ts, which
 * the tools do not import; a test keeps the two equal).
 *
 * A registry of several shards is named by the stack that made it (KEYS_STACK), by its manifest secret
 * (KEYS_REGISTRY), or by a local registry.json (KEYS_REGISTRY_FILE); a single secret or key file is a registry of
 * one shard.
 */
export const KEY_STORE_ENV = {
  secretId: 'KEYS_SECRET_ID',
  keysFile: 'KEYS_FILE',
  stack: 'KEYS_STACK',
  registry: 'KEYS_REGISTRY',
  registryFile: 'KEYS_REGISTRY_FILE',
} as const;
