/**
 * The variables that say where the keys are, read alike by the key CLI and the local server, so one setting
 * points both. KEYS_SECRET_ID is also the payment Lambda's (ENV.secretId in lambda/payment/settings.ts, which
 * the tools do not import; a test keeps the two equal).
 */
export const KEY_STORE_ENV = { secretId: 'KEYS_SECRET_ID', keysFile: 'KEYS_FILE' } as const;
