import { curlCommand, LISTENING_PREFIX, startupLines } from '../../../../tools/local-server/banner';

const KEY = 'payk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';

describe('startupLines', () => {
  it('prints the generated key only in a ready curl command, then the listening line', () => {
    // Act
    const lines = startupLines({
      baseUrl: 'http://127.0.0.1:3000',
      pid: 42,
      keys: { kind: 'file', path: '/p/.local/keys.json' },
      generated: { appId: 'demo', key: KEY },
      ttlSeconds: 60,
    });

    // Assert
    expect(lines).toEqual([
      'keys: file /p/.local/keys.json, just created with a new key for app "demo", re-read every 60 s',
      'try:',
      `  curl -i -X POST http://127.0.0.1:3000/payment -H 'Content-Type: application/json' -H 'App-id: demo' -H 'App-key: ${KEY}'`,
      `${LISTENING_PREFIX} http://127.0.0.1:3000 (pid 42); stop with Ctrl-C`,
    ]);
  });

  it('points to the keys file instead of printing a key it did not generate', () => {
    // Act
    const lines = startupLines({
      baseUrl: 'http://127.0.0.1:3000',
      pid: 42,
      keys: { kind: 'file', path: '/p/keys.json' },
      ttlSeconds: 60,
    });

    // Assert
    expect(lines[0]).toBe('keys: file /p/keys.json, re-read every 60 s');
    expect(lines[2]).toContain("-H 'App-key: <a key of app demo, from /p/keys.json>'");
  });

  it('names the secret, region and endpoint when keys come from Secrets Manager', () => {
    // Act
    const lines = startupLines({
      baseUrl: 'http://127.0.0.1:3000',
      pid: 42,
      keys: { kind: 'secretsManager', secretId: 'payment-api/keys' },
      ttlSeconds: 5,
      awsRegion: 'eu-west-1',
      awsEndpoint: 'http://127.0.0.1:5000',
    });

    // Assert
    expect(lines[0]).toBe(
      'keys: Secrets Manager secret payment-api/keys (region eu-west-1, endpoint http://127.0.0.1:5000), re-read every 5 s',
    );
    expect(lines[2]).toContain(
      "-H 'App-key: <a key of app demo, from Secrets Manager secret payment-api/keys>'",
    );
  });
});

describe('curlCommand', () => {
  it('posts JSON to /payment with both credential headers', () => {
    // Act / Assert
    expect(curlCommand('http://127.0.0.1:1234', 'app', 'k')).toBe(
      "curl -i -X POST http://127.0.0.1:1234/payment -H 'Content-Type: application/json' -H 'App-id: app' -H 'App-key: k'",
    );
  });
});
