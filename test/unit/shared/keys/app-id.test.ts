import { randomBytes } from 'node:crypto';
import {
  appIdProblem,
  APP_ID_RULE,
  DEMO_APP_ID,
  GENERATED_KEY_LOOKALIKE_RULE,
  KEY_FORMAT_SHAPE_RULE,
  KEY_SHAPE_RULE,
} from '../../../../shared/keys/app-id';
import { generateKey } from '../../../../shared/keys/key-material';

/** A key as the stack has Secrets Manager generate the demo app's: 48 letters and digits (excludePunctuation). */
function stackDemoKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(48)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

describe('appIdProblem', () => {
  it.each([
    DEMO_APP_ID,
    'shop',
    'partner.eu-1',
    'Acme_Payments',
    'acme-payments-production-eu-west-1-frontend',
    '123e4567-e89b-12d3-a456-426614174000',
    'a'.repeat(31),
    `${'a'.repeat(40)}-${'b'.repeat(23)}`,
  ])('accepts %s', (appId) => {
    expect(appIdProblem(appId)).toBeUndefined();
  });

  it.each([
    ['a legacy generated key', `payk_${'Q'.repeat(43)}`],
    ['the bare prefix', 'payk_'],
    ['the prefix in capitals', 'PAYK_abc'],
  ])('refuses %s: it starts like a generated key', (_label, appId) => {
    expect(appIdProblem(appId)).toBe(GENERATED_KEY_LOOKALIKE_RULE);
  });

  it.each([
    ['a generated key', generateKey()],
    ['a key of another prefix', generateKey('acme_stg')],
    ['a key in capitals', generateKey().toUpperCase()],
    ['a key with a wrong checksum', generateKey().slice(0, -1) + '0'],
  ])('refuses %s: it has the shape of a key of the key format', (_label, appId) => {
    expect(appIdProblem(appId)).toBe(KEY_FORMAT_SHAPE_RULE);
  });

  it.each([
    ["the stack's demo key", stackDemoKey()],
    ['32 characters of it', stackDemoKey().slice(0, 32)],
    ['it in lower case', stackDemoKey().toLowerCase()],
    ['a UUID without its hyphens, which reads as a key in every log', '123e4567e89b12d3a456426614174000'],
  ])('refuses %s: 32 or more letters and digits alone are the shape of a key', (_label, appId) => {
    expect(appIdProblem(appId)).toBe(KEY_SHAPE_RULE);
  });

  it('refuses anything outside the alphabet or over 64 characters', () => {
    expect([appIdProblem(''), appIdProblem('has space'), appIdProblem('a'.repeat(65))]).toEqual([
      `must be ${APP_ID_RULE}`,
      `must be ${APP_ID_RULE}`,
      `must be ${APP_ID_RULE}`,
    ]);
  });
});
