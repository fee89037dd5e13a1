import { KeyCache } from '../../../../lambda/payment/key-cache';
import { captureLogs } from '../../../support/capture-logger';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';

describe('malformed secret entries in the key cache logs', () => {
  it('are located by entry and key position; an invalid app id, such as a pasted key, never appears', async () => {
    // Arrange: an operator pasted a key where the app id belongs, and swapped another app's id and key.
    const pastedKey = 'payk_' + 'Z'.repeat(20) + 'pastedKEY' + 'z'.repeat(14);
    const secret = JSON.stringify({
      demo: [DEMO_KEY, 'short'],
      [pastedKey]: PARTNER_KEY,
      'partner key with spaces': 'partner',
    });
    const logs = captureLogs();
    const cache = new KeyCache({
      source: { description: 'test secret', fetchSecretString: () => Promise.resolve(secret) },
      logger: logs.logger,
      ttlMs: 60_000,
      maxStaleMs: 0,
    });

    // Act
    const { keyring } = await cache.getKeys();

    // Assert
    expect([...keyring.keys()]).toEqual(['demo']);
    const problems = logs.entries().filter((entry) => entry.message === 'malformed key entry ignored');
    expect(problems).toEqual([
      expect.objectContaining({
        entryPosition: 1,
        appId: 'demo',
        keyPosition: 2,
        reason: 'key length must be 16 to 512 characters',
      }),
      expect.objectContaining({
        entryPosition: 2,
        reason: 'app id starts with payk_, like a generated key (a pasted key?)',
      }),
      expect.objectContaining({
        entryPosition: 3,
        reason: 'app id is outside the allowed alphabet or length',
      }),
    ]);
    expect(problems[1]).not.toHaveProperty('appId');
    expect(problems[2]).not.toHaveProperty('appId');
    const everything = logs.lines.join('\n');
    expect(everything).not.toContain('pastedKEY');
    expect(everything).not.toContain('with spaces');
    expect(everything).not.toContain(DEMO_KEY);
    expect(everything).not.toContain(PARTNER_KEY);
  });
});
