import { LISTENING_PREFIX, shellQuoted, startupLines } from '../../../../tools/local-server/banner';

const KEY = 'payk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
/** The server every banner below is for. */
const base = { baseUrl: 'http://127.0.0.1:3000', pid: 42, ttlSeconds: 60 } as const;

describe('startupLines', () => {
  it('never prints the generated key: the ready command reads it from the file and hands it to curl on stdin', () => {
    // Act
    const lines = startupLines({
      ...base,
      keys: { kind: 'file', path: '/p/.local/keys.json' },
      generated: { appId: 'demo', key: KEY },
      keysWatched: true,
    });

    // Assert
    expect(lines).toEqual([
      'keys: file /p/.local/keys.json, just created with a new key for app "demo", re-read as soon as it changes (and every 60 s)',
      "rate limits: off (set APP_RATE_LIMIT to apply one to every app; an app's own rateLimit is not enforced)",
      "try (app demo's key goes from the file to curl on standard input, never on a command line):",
      `  node -p 'const a = require("/p/.local/keys.json")["demo"], k = (Array.isArray(a) ? a : a.keys)[0]; "App-key: " + (k.key ?? k)' | ` +
        `curl -i -X POST http://127.0.0.1:3000/payment -H 'Content-Type: application/json' -H 'App-id: demo' -H @- -d '{}'`,
      `${LISTENING_PREFIX} http://127.0.0.1:3000 (pid 42); stop with Ctrl-C`,
    ]);
    expect(lines.join('\n')).not.toContain(KEY);
  });

  it('says the file is re-read only at the TTL when it cannot be watched', () => {
    // Act
    const lines = startupLines({ ...base, keys: { kind: 'file', path: '/p/keys.json' } });

    // Assert
    expect(lines[0]).toBe('keys: file /p/keys.json, re-read every 60 s');
    expect(lines[3]).toContain('require("/p/keys.json")["demo"]');
  });

  it('names the secret, region and endpoint when keys come from Secrets Manager', () => {
    // Act
    const lines = startupLines({
      ...base,
      keys: { kind: 'secretsManager', secretId: 'payment-api/keys' },
      ttlSeconds: 5,
      awsRegion: 'eu-west-1',
      awsEndpoint: 'http://127.0.0.1:5000',
    });

    // Assert
    expect(lines[0]).toBe(
      'keys: Secrets Manager secret payment-api/keys (region eu-west-1, endpoint http://127.0.0.1:5000), re-read every 5 s',
    );
    expect(lines[2]).toBe(
      'try, with APP_KEY set to a key of app demo from Secrets Manager secret payment-api/keys:',
    );
    expect(lines[3]).toBe(
      `  printf 'App-key: %s\\n' "$APP_KEY" | curl -i -X POST http://127.0.0.1:3000/payment -H 'Content-Type: application/json' -H 'App-id: demo' -H @- -d '{}'`,
    );
  });
});

describe('startupLines for a key registry of shards', () => {
  const curl = `curl -i -X POST http://127.0.0.1:3000/payment -H 'Content-Type: application/json' -H 'App-id: demo' -H @- -d '{}'`;

  it("names the registry file and its shards, and reads demo's key from its shard file", () => {
    // Act
    const lines = startupLines({
      ...base,
      keys: {
        kind: 'registryFile',
        path: '/p/registry/registry.json',
        registry: { shards: 4, demo: { shard: 2, id: '/p/registry/keys-2.json' }, demoPresent: true },
      },
      keysWatched: true,
    });

    // Assert
    expect(lines[0]).toBe(
      'keys: registry file /p/registry/registry.json, 4 shards, each of its files re-read as soon as it changes (and every 60 s)',
    );
    expect(lines.slice(2, 4)).toEqual([
      "try (app demo's key goes from shard 2's file to curl on standard input, never on a command line):",
      `  node -p 'const a = require("/p/registry/keys-2.json")["demo"], k = (Array.isArray(a) ? a : a.keys)[0]; "App-key: " + (k.key ?? k)' | ${curl}`,
    ]);
  });

  it('says a reshard is under way, and how to add app demo when the registry lacks it', () => {
    // Act
    const lines = startupLines({
      ...base,
      keys: {
        kind: 'registryFile',
        path: "/p/it's/registry.json",
        registry: {
          shards: 8,
          previousShards: 4,
          demo: { shard: 5, id: "/p/it's/keys-5.json" },
          demoPresent: false,
        },
      },
    });

    // Assert
    expect(lines[0]).toBe(
      "keys: registry file /p/it's/registry.json, 8 shards, a reshard from 4 under way, each of its files re-read every 60 s",
    );
    expect(lines[2]).toBe(
      `app demo is not in the registry yet: npm run -s keys -- add-app demo --plain --registry-file '/p/it'\\''s/registry.json' ` +
        "adds it (its key is printed once); then try (its key goes from shard 5's file to curl on standard input, never on a command line):",
    );
    // The path is shell-quoted inside the command's single quotes.
    expect(lines[3]).toContain(`require("/p/it'\\''s/keys-5.json")["demo"]`);
  });

  it.each([
    {
      stackName: undefined,
      keysLine:
        'keys: key registry payment-api/S/keys/registry in Secrets Manager, 8 shards (region eu-west-1, endpoint http://127.0.0.1:5000), each shard and the manifest re-read every 60 s',
    },
    {
      stackName: 'S',
      keysLine:
        "keys: stack S's key registry payment-api/S/keys/registry in Secrets Manager, 8 shards (region eu-west-1, endpoint http://127.0.0.1:5000), each shard and the manifest re-read every 60 s",
    },
  ])(
    "names the manifest secret (stack $stackName) and the secret of demo's shard",
    ({ stackName, keysLine }) => {
      // Act
      const lines = startupLines({
        ...base,
        keys: {
          kind: 'registry',
          manifestId: 'payment-api/S/keys/registry',
          ...(stackName === undefined ? {} : { stackName }),
          registry: { shards: 8, demo: { shard: 3, id: 'payment-api/S/keys/shard-3' } },
        },
        awsRegion: 'eu-west-1',
        awsEndpoint: 'http://127.0.0.1:5000',
      });

      // Assert
      expect(lines[0]).toBe(keysLine);
      expect(lines.slice(2, 4)).toEqual([
        'try, with APP_KEY set to a key of app demo from Secrets Manager secret payment-api/S/keys/shard-3 (shard 3):',
        `  printf 'App-key: %s\\n' "$APP_KEY" | ${curl}`,
      ]);
    },
  );

  it("names a stack's one keys secret when the stack has no registry", () => {
    const lines = startupLines({
      ...base,
      keys: {
        kind: 'secretsManager',
        secretId: 'arn:aws:secretsmanager:eu-west-1:1:secret:k',
        stackName: 'S',
      },
    });

    expect(lines[0]).toBe(
      "keys: stack S's keys secret arn:aws:secretsmanager:eu-west-1:1:secret:k in Secrets Manager (region from the AWS config, endpoint the default AWS endpoint), re-read every 60 s",
    );
  });
});

describe('the rate limit line of the banner', () => {
  const withFile = { ...base, keys: { kind: 'file', path: '/p/keys.json' } } as const;

  const dynamodb = { kind: 'dynamodb', budgetMs: 150 } as const;

  it.each<[string, Partial<Parameters<typeof startupLines>[0]>, string]>([
    [
      'says the limit applies to every app without its own, counted in this process',
      { rateLimiting: { kind: 'memory', defaultLimit: { perSecond: 2, burst: 2 } } },
      'rate limits: 2/s, burst 2 for every app without a rateLimit of its own, counted in this process',
    ],
    [
      'names the table, its region and endpoint, the deadline and what happens past it',
      {
        rateLimiting: {
          ...dynamodb,
          defaultLimit: { perSecond: 0.5, burst: 1 },
          tableName: 'PaymentApi-RateLimits',
          failure: 'closed',
        },
        limiterRegion: 'eu-west-1',
        limiterEndpoint: 'http://127.0.0.1:5000',
      },
      'rate limits: 0.5/s, burst 1 for every app without a rateLimit of its own, counted in DynamoDB table ' +
        'PaymentApi-RateLimits (region eu-west-1, endpoint http://127.0.0.1:5000); when it cannot answer within ' +
        '150 ms, requests get 503 (closed)',
    ],
    [
      'says where region and endpoint come from when the environment names neither',
      {
        rateLimiting: {
          ...dynamodb,
          defaultLimit: { perSecond: 20, burst: 40 },
          tableName: 'limits',
          failure: 'open',
        },
      },
      'rate limits: 20/s, burst 40 for every app without a rateLimit of its own, counted in DynamoDB table limits ' +
        '(region from the AWS config, endpoint the default AWS endpoint); ' +
        'when it cannot answer within 150 ms, requests go on (open)',
    ],
  ])('%s', (_label, settings, line) => {
    expect(startupLines({ ...withFile, ...settings })[1]).toBe(line);
  });
});

describe('shellQuoted', () => {
  it('leaves $, backticks and double quotes as they are inside its single quotes', () => {
    expect(shellQuoted('$HOME `x` "y"')).toBe(`'$HOME \`x\` "y"'`);
  });
});
