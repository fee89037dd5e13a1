import { KeyCache } from '../../../../lambda/payment/key-cache';
import { captureLogs } from '../../../support/capture-logger';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';

function cacheOver(secret: string, logger: ReturnType<typeof captureLogs>['logger']): KeyCache {
  return new KeyCache({
    source: { description: 'test secret', fetchSecretString: () => Promise.resolve(secret) },
    logger,
    ttlMs: 60_000,
    maxStaleMs: 0,
  });
}

describe('malformed secret entries in the key cache logs', () => {
  it('are located by entry and key position only; no app id appears, valid or not', async () => {
    // Arrange: an operator pasted a key where the app id belongs, and swapped another app's id and key.
    const pastedKey = 'payk_' + 'Z'.repeat(20) + 'pastedKEY' + 'z'.repeat(14);
    const secret = JSON.stringify({
      demo: [DEMO_KEY, 'short'],
      [pastedKey]: PARTNER_KEY,
      'partner key with spaces': 'partner',
    });
    const logs = captureLogs();
    const cache = cacheOver(secret, logs.logger);

    // Act
    const { keyring } = await cache.getKeys();

    // Assert
    expect([...keyring.keys()]).toEqual(['demo']);
    const problems = logs.entries().filter((entry) => entry.message === 'malformed key entry ignored');
    expect(problems).toEqual([
      expect.objectContaining({
        entryPosition: 1,
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
    for (const problem of problems) expect(problem).not.toHaveProperty('appId');
    const everything = logs.lines.join('\n');
    expect(everything).not.toContain('pastedKEY');
    expect(everything).not.toContain('with spaces');
    expect(everything).not.toContain(DEMO_KEY);
    expect(everything).not.toContain(PARTNER_KEY);
  });

  it('when every entry is malformed: logs each one by position and reason, then the refused refresh', async () => {
    // Arrange
    const secret = JSON.stringify({ demo: ['short'], partner: 42 });
    const logs = captureLogs();

    // Act
    await expect(cacheOver(secret, logs.logger).getKeys()).rejects.toThrow('keys have never loaded');

    // Assert
    const lines = logs.entries().filter((entry) => entry.level === 'error');
    expect(lines.map((entry) => entry.message)).toEqual([
      'malformed key entry ignored',
      'malformed key entry ignored',
      'keys refresh failed',
    ]);
    expect(lines[0]).toMatchObject({
      entryPosition: 1,
      keyPosition: 1,
      reason: 'key length must be 16 to 512 characters',
    });
    expect(lines[1]).toMatchObject({
      entryPosition: 2,
      keyPosition: 1,
      reason: 'key is not a string or a key object',
    });
    expect(lines[2]).toMatchObject({
      error: 'MalformedSecretError: secret has 2 app entries and none is valid',
    });
    for (const line of lines) expect(line).not.toHaveProperty('appId');
  });
});
