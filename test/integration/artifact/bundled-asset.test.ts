import { DescribeSecretCommand } from '@aws-sdk/client-secrets-manager';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { SLIM_BUNDLING } from '../../../lib/bundled-function';
import { advanceClock, invokeAsset, invokeAssetOutcomes } from '../../support/asset-runner';
import { emfProblems, logEntries, readEmfLines, samplesOf, totalCounts } from '../../support/emf';
import { startFaultProxy } from '../../support/fault-proxy';
import { paymentEvent, requestOf } from '../../support/events';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY, SECRET_STRING } from '../../support/keys';
import { expiresAtOf, parseKeyDocument } from '../../../shared/keys/key-document';
import { ROTATION_STEPS } from '../../../lambda/rotation/rotation-rules';
import {
  beginMotoRotation,
  createMotoRateLimitTable,
  createMotoSecret,
  createSecret,
  EMULATOR_LIMITER_DEADLINE_MS,
  motoSecretSource,
  motoSecretsManager,
  sharedMoto,
  type MotoServer,
} from '../../support/moto';
import { limitedAssetEnv } from '../../support/rate-limit-scenarios';
import { synthesizeApp, type SynthesizedApp } from '../../support/synth';
import { createMotoRegistry, type MotoRegistry } from '../../support/registry-moto';
import { shardsToSearch } from '../../../shared/keys/registry';
import { shardOf } from '../../../shared/keys/shard';

const PROJECT_ROOT = join(__dirname, '..', '..', '..');

/**
 * The deployable artifacts, not the source: synthesize with the real CLI (scheduled rotation on, so both functions
 * are built; and again with per-app limits, which build the payment Lambda from lambda/payment/rate-limited.ts),
 * take the bundled Lambdas out of cdk.out, load each in a fresh Node process and invoke it against moto's Secrets
 * Manager and DynamoDB APIs.
 */
let outdir: string;
let app: SynthesizedApp;
let limitedOutdir: string;
let limitedApp: SynthesizedApp;
let moto: MotoServer;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'payment-cdk-out-'));
  limitedOutdir = mkdtempSync(join(tmpdir(), 'payment-cdk-out-limited-'));
  // One moto for the whole file: each describe below uses secrets and tables of its own names.
  [app, limitedApp, moto] = await Promise.all([
    synthesizeApp(outdir, { rotationDays: '30' }),
    synthesizeApp(limitedOutdir, { appRateLimit: '20' }),
    sharedMoto(),
  ]);
}, 300_000);

afterAll(async () => {
  await moto.stop();
  rmSync(outdir, { recursive: true, force: true });
  rmSync(limitedOutdir, { recursive: true, force: true });
});

/** Never hand a minified bundle to a matcher whole: a failure would print all of it. */
function bundleShape(assetDir: string | undefined, operation: string) {
  const source = readFileSync(join(assetDir ?? '', 'index.js'), 'utf8');
  return {
    strict: source.startsWith('"use strict";'),
    esm: /^\s*(import|export)\s/m.test(source),
    sourceMap: source.includes('sourceMappingURL'),
    lines: source.split('\n').length,
    callsItsOperation: source.includes(`"${operation}"`),
  };
}

describe.each([
  ['payment', () => app.paymentAssetDir, 'GetSecretValue'],
  ['rate-limited payment', () => limitedApp.paymentAssetDir, 'UpdateItem'],
  ['rotation', () => app.rotationAssetDir, 'UpdateSecretVersionStage'],
  ['key registry monitor', () => app.monitorAssetDir, 'BatchGetSecretValue'],
])('the %s bundle', (_name, assetDir, operation) => {
  it('is minified strict CommonJS, without a source map, and calls its operation', () => {
    const shape = bundleShape(assetDir(), operation);

    expect(shape).toEqual({
      strict: true,
      esm: false,
      sourceMap: false,
      lines: shape.lines,
      callsItsOperation: true,
    });
    expect(shape.lines).toBeLessThan(200);
  });
});

/** Text every bundle of the AWS SDK carries: its user agent, its packages' names. */
const SDK_MARKS = ['aws-sdk-js', '@smithy/', '@aws-sdk/', 'middlewareStack'];

describe.each([
  ['payment', 'lambda/payment/index.ts', () => app.paymentAssetDir],
  ['rate-limited payment', 'lambda/payment/rate-limited.ts', () => limitedApp.paymentAssetDir],
])('the %s bundle', (_name, entry, assetDir) => {
  it('holds no code of any package (@aws-sdk/*, @smithy/* or other): its signer is node:crypto', async () => {
    const { metafile } = await build({
      entryPoints: [join(PROJECT_ROOT, entry)],
      absWorkingDir: PROJECT_ROOT,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      mainFields: [...SLIM_BUNDLING.mainFields],
      write: false,
      metafile: true,
      logLevel: 'error',
    });
    const packages = new Set(
      Object.keys(metafile.inputs)
        .map((input) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1])
        .filter((name) => name !== undefined),
    );
    const source = readFileSync(join(assetDir(), 'index.js'), 'utf8');

    expect([...packages]).toEqual([]);
    expect(SDK_MARKS.filter((mark) => source.includes(mark))).toEqual([]);
  });

  it('is a self-contained CommonJS bundle that needs nothing but Node built-ins', () => {
    // Never hand the minified source to a matcher: a failure would print all of it.
    const source = readFileSync(join(assetDir(), 'index.js'), 'utf8');
    const required = new Set([...source.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]));
    const nonBuiltins = [...required].filter(
      (name) => name !== undefined && !name.startsWith('node:') && !builtinModules.includes(name),
    );

    // That it is not ESM is the shape test's (esm: false, above).
    expect(source.includes('module.exports')).toBe(true);
    expect(nonBuiltins).toEqual([]);
  });

  it("reads credentials from Lambda's environment only: no other credential source is in it", () => {
    const source = readFileSync(join(assetDir(), 'index.js'), 'utf8');
    const marks = (text: string): boolean => source.includes(text);

    expect(marks('AWS_SESSION_TOKEN')).toBe(true);
    expect(
      [
        'AWS_CONTAINER_CREDENTIALS_FULL_URI',
        'sso_start_url',
        'web_identity_token_file',
        'credential_process',
      ].filter(marks),
    ).toEqual([]);
  });
});

/**
 * Keys with rules, for the scripted sequence: demo's second key expired long ago; partner's one key expires in 3
 * days (within the 14-day warning) and may be used only from networks the test events do not come from.
 */
function secretWithRules(now: number): string {
  return JSON.stringify({
    demo: [DEMO_KEY, { key: DEMO_NEXT_KEY, expires: '2020-01-01T00:00:00Z' }],
    partner: {
      keys: [{ key: PARTNER_KEY, expires: new Date(now + 3 * 86_400_000).toISOString() }],
      allowedCidrs: ['198.51.100.0/24', '2001:db8::/32'],
    },
  });
}

describe('the bundled payment Lambda in cdk.out', () => {
  let rulesSecretArn: string;

  beforeAll(async () => {
    rulesSecretArn = await createMotoSecret(moto, 'payment-api/keys-with-rules', secretWithRules(Date.now()));
  }, 180_000);

  it('writes EMF metrics that follow the specification, with exactly the counts and levels of a scripted sequence', async () => {
    // Secrets Manager answers the first fetch (at init), then stops: connections are refused.
    const proxy = await startFaultProxy(moto.port);
    await proxy.setMode('refused', { afterCalls: 1 });
    const valid = requestOf('demo', DEMO_KEY);
    const steps = [
      valid,
      requestOf('demo', PARTNER_KEY),
      requestOf('nobody', DEMO_KEY),
      paymentEvent([
        ['Content-Type', 'text/plain'],
        ['App-id', 'demo'],
        ['App-key', DEMO_KEY],
      ]),
      requestOf('demo', DEMO_KEY, { body: '{not json' }),
      // A right key past its expiry; a right key from a network its app does not allow (the events' 203.0.113.10).
      requestOf('demo', DEMO_NEXT_KEY),
      requestOf('partner', PARTNER_KEY),
      // Past the 60 s TTL, within TTL + 60 s of staleness: the refresh fails, the stale keys answer. The runner's
      // clock moves on instead of the test waiting, so a slow machine cannot carry it past either bound.
      advanceClock(61_000),
      valid,
      // Past the staleness bound: nothing usable, the fetch fails, 503.
      advanceClock(60_000),
      valid,
    ];

    try {
      const { results, output } = await invokeAsset(app.paymentAssetDir, steps, {
        ...moto.awsEnv,
        KEYS_SECRET_ID: rulesSecretArn,
        AWS_ENDPOINT_URL: proxy.endpoint,
        KEY_CACHE_TTL_SECONDS: '60',
        KEY_MAX_STALE_SECONDS: '60',
        SERVICE_NAME: 'PaymentApi-artifact',
      });

      const statuses = [200, 401, 401, 415, 400, 401, 401, 200, 503];
      expect(results.map((result) => result.statusCode)).toEqual(statuses);
      expect(JSON.parse(results[0]?.body ?? '')).toEqual({
        code: 'ok',
        message: 'Payment request accepted.',
      });
      // A wrong key, an unknown app, an expired key and a network not allowed: one body.
      expect([2, 5, 6].map((index) => results[index]?.body)).toEqual([2, 5, 6].map(() => results[1]?.body));
      expect(output).toContain('"message":"keys loaded"');
      // Every request logged once, with the Lambda request id, the API Gateway request id and the cold start.
      const requestLines = logEntries(output, 'request accepted', 'request refused', 'keys unavailable');
      expect(
        requestLines.map((entry) => [
          entry.function_request_id,
          entry.apiRequestId,
          entry.cold_start,
          entry.service,
          entry.status,
        ]),
      ).toEqual(
        statuses.map((status, index) => [
          `lambda-request-${index + 1}`,
          'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
          index === 0,
          'PaymentApi-artifact',
          status,
        ]),
      );
      const { raw, lines } = readEmfLines(output);
      expect(raw.map(emfProblems)).toEqual(raw.map(() => []));
      // One line per invocation, each in the default namespace with the one Service dimension.
      expect(lines).toHaveLength(9);
      for (const line of lines) {
        expect([line.namespace, line.dimensionSets, line.dimensions]).toEqual([
          'PaymentApi',
          [['Service']],
          { Service: 'PaymentApi-artifact' },
        ]);
      }
      const units = lines.map((line) => line.units).reduce((all, each) => ({ ...all, ...each }), {});
      expect(units).toMatchObject({ Accepted: 'Count' });
      expect(totalCounts(lines)).toEqual({
        ColdStart: 1,
        KeyRefreshSucceeded: 1,
        Accepted: 2,
        Unauthorized: 4,
        ExpiredKey: 1,
        SourceNotAllowed: 1,
        UnsupportedMediaType: 1,
        BadRequest: 1,
        StaleKeysServed: 1,
        KeyRefreshFailed: 2,
        Unavailable: 1,
      });
      // The levels are the monitor function's, for every shard: the payment Lambda measures none, though partner's
      // key expires within 14 days.
      expect([samplesOf(lines, 'KeysExpiringSoon'), samplesOf(lines, 'SecretFill')]).toEqual([[], []]);
      expect(Object.keys(units)).not.toContain('KeysExpiringSoon');
      expect(Object.keys(units)).not.toContain('SecretFill');
      const refusals = logEntries(output, 'request refused').filter(
        (entry) => entry.reason === 'expired_key' || entry.reason === 'source_not_allowed',
      );
      expect(refusals.map((entry) => [entry.reason, entry.appId])).toEqual([
        ['expired_key', 'demo'],
        ['source_not_allowed', 'partner'],
      ]);
      expect(output).not.toContain(DEMO_KEY);
      expect(output).not.toContain(PARTNER_KEY);
    } finally {
      await proxy.close();
    }
  });
});

/** Twelve apps, each with its own key, spread over the shards of each registry below. */
const SHARDED_APPS: readonly (readonly [string, string])[] = Array.from({ length: 12 }, (_, index) => [
  `asset-app-${index}`,
  `test-asset-key-${index}-0123456789abcdef`,
]);

/**
 * A registry of 4 shards with a reshard from 2 under way, half the apps moved: the bundle reads the layout from its
 * environment (KEY_SHARDS, KEY_SHARDS_PREVIOUS, the name prefix) and finds each app at home or at its previous home.
 * Which shard an app is looked for in, once per TTL, is test/unit/lambda/payment/sharded-keys.test.ts's.
 */
const SHARDS = 4;
const PREVIOUS_SHARDS = 2;
const placeOf = (appId: string, index: number): number =>
  shardOf(appId, index % 2 === 0 ? SHARDS : PREVIOUS_SHARDS);

describe('the bundled payment Lambda over a key registry of 4 shards, a reshard from 2 under way', () => {
  let registry: MotoRegistry;

  beforeAll(async () => {
    const documents = Array.from({ length: SHARDS }, (): Record<string, string> => ({}));
    SHARDED_APPS.forEach(([appId, key], index) => {
      const shard = documents[placeOf(appId, index)];
      if (shard !== undefined) shard[appId] = key;
    });
    registry = await createMotoRegistry(moto, {
      stackName: 'AssetReshard',
      shards: SHARDS,
      previousShards: PREVIOUS_SHARDS,
      texts: documents.map((document) => JSON.stringify(document)),
    });
  }, 60_000);

  it("fetches exactly one shard for a cold environment's first request, then each shard a request needs once per TTL, answers every app from whichever shard holds it, and logs each shard it loads", async () => {
    // Arrange: the first app is in its home under the current count (moved).
    const proxy = await startFaultProxy(moto.port);
    const [firstApp = '', firstKey = ''] = SHARDED_APPS[0] ?? [];
    const home = shardOf(firstApp, SHARDS);
    try {
      // Act
      const { results, output } = await invokeAsset(
        app.paymentAssetDir,
        [
          requestOf(firstApp, firstKey),
          ...SHARDED_APPS.map(([appId, key]) => requestOf(appId, key)),
          requestOf('asset-app-3', 'test-asset-key-4-0123456789abcdef'),
          requestOf('nobody', 'test-asset-key-4-0123456789abcdef'),
        ],
        {
          ...moto.awsEnv,
          AWS_ENDPOINT_URL: proxy.endpoint,
          ...registry.env,
          KEY_CACHE_TTL_SECONDS: '60',
          KEY_MAX_STALE_SECONDS: '900',
        },
      );

      // Assert: every app served, a wrong key and an unknown app refused.
      expect(results.map((result) => result.statusCode)).toEqual([
        200,
        ...SHARDED_APPS.map(() => 200),
        401,
        401,
      ]);
      // The first answer came after one fetch, of the first app's home.
      const fetched = proxy.calls.filter((call) => call.operation === 'GetSecretValue');
      expect(fetched[0]?.secretId).toBe(registry.layout.shardIds[home]);
      const beforeFirstAnswer = output.slice(0, output.indexOf('"message":"request accepted"'));
      expect(beforeFirstAnswer.split('"message":"keys loaded"')).toHaveLength(2);
      // Each shard fetched once at most within the TTL, and only the shards the requests needed.
      const secretIds = fetched.map((call) => call.secretId);
      expect(new Set(secretIds).size).toBe(secretIds.length);
      // An app found nowhere is judged against its new home alone, whose copy is fresh.
      const needed = new Set([
        ...SHARDED_APPS.flatMap(([appId], index) => {
          const search = shardsToSearch(registry.layout, appId);
          return search.slice(0, search.indexOf(placeOf(appId, index)) + 1);
        }),
        shardOf('nobody', SHARDS),
      ]);
      expect([...secretIds].sort()).toEqual(
        [...needed].map((index) => registry.layout.shardIds[index]).sort(),
      );
      // Each load logged once, by shard number and the secret it came from, never a key.
      const loaded = logEntries(output, 'keys loaded');
      expect(loaded.map((line) => line.source).sort()).toEqual([...secretIds].sort());
      expect(loaded.map((line) => line.source)).toEqual(
        loaded.map((line) => registry.layout.shardIds[Number(line.shard)]),
      );
      // Counted as refreshes, one per shard; no level measured (the monitor's).
      const { lines } = readEmfLines(output);
      expect(totalCounts(lines)).toMatchObject({ KeyRefreshSucceeded: needed.size, Accepted: 13 });
      expect(samplesOf(lines, 'SecretFill')).toEqual([]);
      for (const [, key] of SHARDED_APPS) expect(output).not.toContain(key);
    } finally {
      await proxy.close();
    }
  });
});

describe('the bundled rate-limited payment Lambda in cdk.out (appRateLimit)', () => {
  it('stays within its 70 KB budget (the limiter and its DynamoDB call included), while the one without limits stays within 60 KB', () => {
    expect(statSync(join(limitedApp.paymentAssetDir, 'index.js')).size).toBeLessThanOrEqual(70 * 1000);
    expect(statSync(join(app.paymentAssetDir, 'index.js')).size).toBeLessThanOrEqual(60 * 1000);
  });
});

describe('the bundled rotation Lambda in cdk.out', () => {
  it('runs the four rotation steps with credentials from the environment, adding one key per app and expiring the keys it supersedes one period on', async () => {
    const client = motoSecretsManager(moto);
    const arn = await createSecret(client, 'payment-api/rotated-keys', SECRET_STRING);
    const token = randomUUID();
    await beginMotoRotation(client, arn, token);
    const rotationDir = app.rotationAssetDir ?? '';

    const startedAt = Date.now();
    const { results, output } = await invokeAssetOutcomes(
      rotationDir,
      ROTATION_STEPS.map((step) => ({ Step: step, SecretId: arn, ClientRequestToken: token })),
      { ...moto.awsEnv, ROTATION_KEEP_KEYS: '2', ROTATION_PERIOD_HOURS: '720' },
    );
    const endedAt = Date.now();

    expect(results).toEqual(ROTATION_STEPS.map(() => ({ ok: true })));
    const rotated = parseKeyDocument(await motoSecretSource(moto, arn).fetchSecretString());
    const demo = rotated.get('demo')?.keys ?? [];
    const partner = rotated.get('partner')?.keys ?? [];
    const superseded = [...demo.slice(0, -1), ...partner.slice(0, -1)];
    expect(superseded.map((key) => key.stored)).toEqual([DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY]);
    // 30 days after the rotation's window opened: midnight UTC of the day it ran.
    const inThirtyDaysFromMidnight = (instant: number): number =>
      Math.floor(instant / 86_400_000) * 86_400_000 + 30 * 86_400_000;
    for (const key of superseded) {
      expect(expiresAtOf(key)).toBeGreaterThanOrEqual(inThirtyDaysFromMidnight(startedAt));
      expect(expiresAtOf(key)).toBeLessThanOrEqual(inThirtyDaysFromMidnight(endedAt));
    }
    expect([demo.at(-1)?.expires, partner.at(-1)?.expires]).toEqual([undefined, undefined]);
    expect(rotated.get('hashed')).toEqual(parseKeyDocument(SECRET_STRING).get('hashed'));
    const description = await client.send(new DescribeSecretCommand({ SecretId: arn }));
    expect(description.VersionIdsToStages?.[token]).toEqual(['AWSCURRENT']);
    expect(output).not.toContain(DEMO_KEY);
    client.destroy();
  });
});

describe('the bundled key registry monitor in cdk.out', () => {
  it('measures every shard of a registry in moto, with credentials from the environment, and emits its three metrics', async () => {
    // Arrange: 3 shards under a prefix, as a stack names them; shard 2 holds no valid entry.
    const prefix = `payment-api/Monitored-${randomUUID().slice(0, 8)}/keys/`;
    const shardZero = await createMotoSecret(moto, `${prefix}zero`, SECRET_STRING);
    await createMotoSecret(moto, `${prefix}shard-1`, '{}');
    await createMotoSecret(moto, `${prefix}shard-2`, JSON.stringify({ broken: 42 }));

    // Act
    const { results, output } = await invokeAssetOutcomes(app.monitorAssetDir, [{}], {
      ...moto.awsEnv,
      KEYS_SECRET_ID: shardZero,
      KEY_SHARDS: '3',
      KEY_SHARD_NAME_PREFIX: prefix,
      SERVICE_NAME: 'Monitored',
    });

    // Assert
    expect(results).toEqual([
      {
        ok: true,
        value: expect.objectContaining({
          slots: 3,
          calls: 1,
          measuredShards: 2,
          failedShards: [2],
          apps: 3,
        }) as unknown,
      },
    ]);
    const { raw, lines } = readEmfLines(output);
    expect(raw.map(emfProblems)).toEqual([[]]);
    expect(lines[0]?.dimensions).toEqual({ Service: 'Monitored' });
    expect(lines[0]?.samples).toEqual({
      SecretFill: [(Buffer.byteLength(SECRET_STRING) / 65_536) * 100],
      KeysExpiringSoon: [0],
      KeyShardsUnreadable: [1],
    });
    expect(output).toContain('"message":"key shard measured"');
    expect(output).not.toContain(DEMO_KEY);
  });
});

describe("the bundled payment Lambdas' AWS settings, read as the SDK reads them", () => {
  let secretArn: string;
  const TABLE = 'payment-api-rate-limits-settings';
  const SECRET_ACCESS_KEY = 'moto-secret-access-key-never-logged';
  const LIMIT = { perSecond: 0.01, burst: 5 };

  beforeAll(async () => {
    secretArn = await createMotoSecret(moto, 'payment-api/settings-keys', SECRET_STRING);
    await createMotoRateLimitTable(moto, TABLE);
  }, 60_000);

  const demo = () => requestOf('demo', DEMO_KEY);

  /** Each bundle's environment as the stack sets it, with every endpoint and credential given here. */
  const bundles = [
    [
      'without rate limits',
      () => app.paymentAssetDir,
      (aws: Record<string, string>) => ({ ...aws, KEYS_SECRET_ID: secretArn }),
    ],
    [
      'with rate limits',
      () => limitedApp.paymentAssetDir,
      (aws: Record<string, string>) => {
        const limited: Record<string, string> = limitedAssetEnv({
          moto,
          secretArn,
          tableName: TABLE,
          defaultLimit: LIMIT,
          budgetMs: EMULATOR_LIMITER_DEADLINE_MS,
        });
        // Only the case's AWS settings: none of moto's own.
        for (const name of [...Object.keys(moto.awsEnv)]) Reflect.deleteProperty(limited, name);
        return { ...limited, ...aws };
      },
    ],
  ] as const;

  it.each(bundles)(
    '%s: signs requests moto accepts at AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_DYNAMODB, with temporary credentials',
    async (label, assetDir, envOf) => {
      const env = envOf({
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'ASIAMOTOEXAMPLE',
        AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY,
        AWS_SESSION_TOKEN: 'moto-session-token',
        AWS_ENDPOINT_URL_SECRETS_MANAGER: moto.endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: moto.endpoint,
      });

      const { results, output } = await invokeAsset(assetDir(), [demo(), demo()], env);

      expect(results.map((result) => result.statusCode)).toEqual([200, 200]);
      // With limits, the limiter decided: DynamoDB was reached and counted the requests.
      expect(results.map((result) => result.headers?.RateLimit !== undefined)).toEqual(
        label === 'with rate limits' ? [true, true] : [false, false],
      );
      expect(output).not.toContain(SECRET_ACCESS_KEY);
    },
  );

  /**
   * Which problem each setting gets is test/unit/shared/aws/aws-environment.test.ts's; the bundle must turn any of
   * them into one line at start and 503 for every request: here one problem of the credentials, one of the
   * endpoints.
   */
  const BAD_SETTINGS: readonly (readonly [string, Record<string, string>, string])[] = [
    [
      'no credentials',
      { AWS_REGION: 'us-east-1', AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY },
      'credentials are missing: AWS_ACCESS_KEY_ID is not set (the payment Lambda reads credentials from its environment only)',
    ],
    [
      'dual-stack endpoints, which the client does not support',
      {
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY,
        AWS_USE_DUALSTACK_ENDPOINT: 'true',
      },
      "AWS_USE_DUALSTACK_ENDPOINT=true is not supported by the payment Lambda's client (IPv4 endpoints only)",
    ],
  ];

  describe.each(bundles)('%s', (_label, assetDir, envOf) => {
    it.each(BAD_SETTINGS)(
      '%s: one line at start saying which, then 503 unavailable for every request, never a 500, never a credential',
      async (_case, aws, problem) => {
        const { results, output } = await invokeAsset(assetDir(), [demo(), demo()], envOf(aws));

        expect(results.map((result) => result.statusCode)).toEqual([503, 503]);
        expect(results.map((result) => (JSON.parse(result.body) as { code?: unknown }).code)).toEqual([
          'unavailable',
          'unavailable',
        ]);
        const lines = output.split('\n').filter((line) => line.includes('"message":"AWS settings unusable'));
        expect(lines.map((line) => (JSON.parse(line) as { problem?: unknown }).problem)).toEqual([problem]);
        expect(output.indexOf(lines[0] ?? '')).toBeLessThan(output.indexOf('lambda-request-1'));
        expect(output).not.toContain(SECRET_ACCESS_KEY);
      },
    );
  });
});
