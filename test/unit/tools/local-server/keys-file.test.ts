import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKeysFile, keysFilePermissionWarning } from '../../../../tools/local-server/keys-file';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { keyShape } from '../../../../shared/keys/key-format';

/** Each test's own directory, removed after it. */
let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'payment-api-keys-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('ensureKeysFile', () => {
  it('creates the file with one generated key for app demo, in the secret format', async () => {
    // Arrange
    const path = join(directory, 'keys.json');

    // Act
    const setup = await ensureKeysFile(path);

    // Assert
    expect(setup.created).toBe(true);
    if (!setup.created) return;
    expect(setup.appId).toBe('demo');
    expect(setup.key).toMatch(/^pay_[0-9A-Za-z]{38}$/);
    expect(keyShape(setup.key, 'pay')).toBe('prefixed');
    const content = await readFile(path, 'utf8');
    expect(JSON.parse(content)).toEqual({ demo: [setup.key] });
    expect(parseKeyring(content).problems).toEqual([]);
  });

  it("generates the demo key with the stack's prefix", async () => {
    const setup = await ensureKeysFile(join(directory, 'keys.json'), 'acme_dev');

    expect(setup.created && keyShape(setup.key, 'acme_dev')).toBe('prefixed');
  });

  it('creates missing directories with mode 0700 and the file with mode 0600', async () => {
    // Arrange
    const path = join(directory, 'a', 'b', 'keys.json');

    // Act
    await ensureKeysFile(path);

    // Assert
    expect((await stat(join(directory, 'a'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(directory, 'a', 'b'))).mode & 0o777).toBe(0o700);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('leaves an existing file untouched and reports no key', async () => {
    // Arrange
    const path = join(directory, 'keys.json');
    await writeFile(path, '{"mine":"an-existing-key-0001"}', { mode: 0o600 });

    // Act
    const setup = await ensureKeysFile(path);

    // Assert
    expect(setup).toEqual({ created: false });
    expect(await readFile(path, 'utf8')).toBe('{"mine":"an-existing-key-0001"}');
  });

  it('lets exactly one of several concurrent starts create the file, and leaves no temporary file', async () => {
    // Arrange
    const path = join(directory, 'keys.json');

    // Act
    const setups = await Promise.all(Array.from({ length: 8 }, () => ensureKeysFile(path)));

    // Assert
    const created = setups.filter((setup) => setup.created);
    expect(created).toHaveLength(1);
    const winner = created[0];
    if (!winner?.created) return;
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ demo: [winner.key] });
    expect(await readdir(directory)).toEqual(['keys.json']);
  });
});

describe('keysFilePermissionWarning', () => {
  it.each([
    { mode: 0o600, warns: false },
    { mode: 0o400, warns: false },
    { mode: 0o640, warns: true },
    { mode: 0o644, warns: true },
  ])('warns=$warns for mode $mode', async ({ mode, warns }) => {
    // Arrange
    const path = join(directory, 'keys.json');
    await writeFile(path, '{}');
    await chmod(path, mode);

    // Act
    const warning = await keysFilePermissionWarning(path);

    // Assert
    if (warns) expect(warning).toContain(`chmod 600 '${path}'`);
    else expect(warning).toBeUndefined();
  });
});
