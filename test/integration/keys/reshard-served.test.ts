/**
 * The proof: "During the move, the Lambda also looks for an app in its previous shard, so no request for any
 * app gets a 401 at any point. Prove it with requests for every app in a loop against moto while a reshard runs."
 *
 * The runtime is the payment asset `cdk synth` builds, each execution environment a fresh Node process loading it as
 * the Lambda runtime does, with the environment the stack gives it during a reshard (KEY_SHARDS=8,
 * KEY_SHARDS_PREVIOUS=4, KEY_SHARD_NAME_PREFIX) and a short key cache TTL. The reshard is the key CLI as an operator
 * runs it, `npm run keys -- reshard --registry <manifest>`, with a settle time of the TTL plus a margin, as the
 * manifest's TTL plus 30 s is by default; its calls go through a proxy that refuses what Secrets Manager would and
 * notes when each arrives. Every environment asks for every app in turn, over and over, from before the CLI starts
 * until each has read every shard as the reshard left it; one environment sits idle from before the copy until
 * after the removal (Lambda leaves environments idle), holding copies older than both. Every answer must be 200:
 * no 401, and no 503 either.
 *
 * What this suite does not repeat: the CLI's own contract for reshard (one write per shard and phase, the default
 * settle, its report, an edit carried over) is test/integration/keys/registry-moto.test.ts's; the fallback rule
 * under every timing of fetches and copies is the property test of test/unit/lambda/payment/sharded-keys.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListSecretsCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { shardOf } from '../../../shared/keys/shard';
import { createOperatorSecretsManagerClient } from '../../../tools/common/aws-clients';
import { invokeAsset } from '../../support/asset-runner';
import { startFleet, type Invocation, type NamedEvent, type RunningFleet } from '../../support/asset-fleet';
import { paymentEvent } from '../../support/events';
import { runCli, startCli } from '../../support/keys-cli';
import { EMULATOR_CALL_BOUNDS, startMoto, type MotoServer } from '../../support/moto';
import {
  createMotoRegistry,
  deployShards,
  shardDocuments,
  type MotoRegistry,
} from '../../support/registry-moto';
import { startSecretsManagerRules, type SecretsManagerRulesProxy } from '../../support/secrets-manager-rules';
import { synthesizeApp } from '../../support/synth';
import type { RunningTool, ToolRun } from '../../support/tool-process';

const TTL_SECONDS = 2;
/** The TTL plus a margin, as the CLI's default is the manifest's TTL plus 30 s. */
const SETTLE = '4s';
const APPS = Array.from({ length: 48 }, (_, index) => `partner-${String(index).padStart(2, '0')}`);
/** Three environments ask for every app in a loop throughout; a fourth sits idle through the move. */
const LOOPING = [0, 1, 2];
const IDLE = 3;
/** Each test runs two or three reshards' worth of npm start-ups on a busy machine; its waits are event-driven. */
const PROOF_TIMEOUT_MS = 240_000;
const WAITING_LINE = /^waiting \d+s, until every reader's key cache holds the copies/;

let outdir: string;
let assetDir: string;
let moto: MotoServer;
let proxy: SecretsManagerRulesProxy;
let admin: SecretsManagerClient;
let directory: string;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'payment-cdk-out-'));
  directory = mkdtempSync(join(tmpdir(), 'reshard-served-'));
  ({ paymentAssetDir: assetDir } = await synthesizeApp(outdir));
  moto = await startMoto();
  proxy = await startSecretsManagerRules(moto.port);
  admin = createOperatorSecretsManagerClient(moto.awsEnv, EMULATOR_CALL_BOUNDS);
  // moto loads Secrets Manager on its first call, for seconds: done here, once.
  await admin.send(new ListSecretsCommand({}));
}, 300_000);

/** What a test started that must not outlive it, should it fail or time out: its fleet, its CLI runs. */
const cleanUps: (() => void)[] = [];

afterEach(() => {
  for (const cleanUp of cleanUps.splice(0)) cleanUp();
});

afterAll(async () => {
  admin.destroy();
  await proxy.close();
  await moto.stop();
  rmSync(outdir, { recursive: true, force: true });
  rmSync(directory, { recursive: true, force: true });
});

/** The key CLI's environment: Secrets Manager through the rules proxy. */
const cliEnv = (): Record<string, string> => ({
  ...moto.awsEnv,
  AWS_ENDPOINT_URL_SECRETS_MANAGER: proxy.endpoint,
});

/**
 * A registry of 4 shards holding every app (added with apply), then deployed as 8 with 4 before: the state
 * `cdk deploy -c keyShards=8 -c keyShardsPrevious=4` leaves, before the reshard. Returns it and each app's key.
 */
async function deployedForReshard(
  name: string,
): Promise<{ registry: MotoRegistry; keys: Map<string, string> }> {
  const small = await createMotoRegistry(
    { secretsManager: admin },
    { shards: 4, keyCacheTtlSeconds: TTL_SECONDS, stackName: name },
  );
  const changes = join(directory, `${name}-changes.json`);
  const keysOut = join(directory, `${name}-keys.jsonl`);
  writeFileSync(changes, JSON.stringify({ changes: APPS.map((app) => ({ op: 'add', app })) }));
  const seeded = await runCli(
    ['apply', changes, '--keys-out', keysOut, '--registry', small.manifestName],
    cliEnv(),
    {
      awsCallBounds: EMULATOR_CALL_BOUNDS,
    },
  );
  expect(seeded.code).toBe(0);
  const keys = new Map(
    readFileSync(keysOut, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { appId: string; key: string })
      .map(({ appId, key }) => [appId, key]),
  );
  return { registry: await deployShards(admin, small, 8, 4), keys };
}

function requestsOf(keys: ReadonlyMap<string, string>): NamedEvent[] {
  return [...keys].map(([appId, key]) => ({
    name: appId,
    event: paymentEvent([
      ['Content-Type', 'application/json'],
      ['App-id', appId],
      ['App-key', key],
    ]),
  }));
}

/** `processes` environments over `registry` as the stack sets them, each warmed up on every app, looping. */
async function fleetOver(
  registry: MotoRegistry,
  events: readonly NamedEvent[],
  processes: number,
): Promise<RunningFleet> {
  const fleet = await startFleet({
    assetDir,
    env: {
      ...moto.awsEnv,
      ...registry.env,
      KEY_CACHE_TTL_SECONDS: String(TTL_SECONDS),
      KEY_MAX_STALE_SECONDS: '900',
    },
    processes: Array.from({ length: processes }, () => ({})),
    warmUp: events.map(({ event }) => event),
    workload: { kind: 'loop', events, gapMs: 2 },
  });
  cleanUps.push(() => {
    fleet.abort();
  });
  return fleet;
}

/** `npm run keys -- reshard --registry <manifest> --settle 4s`, as an operator runs it. */
function startReshard(registry: MotoRegistry): RunningTool {
  const cli = startCli(['reshard', '--registry', registry.manifestName, '--settle', SETTLE], cliEnv());
  cleanUps.push(() => {
    cli.kill('SIGKILL');
  });
  return cli;
}

interface ReshardRun {
  readonly result: ToolRun;
  /** When it was started, began to settle (its `waiting` line), first wrote a removal, and had exited (epoch ms). */
  readonly startedAt: number;
  readonly settlingAt: number;
  readonly firstRemovalAt: number;
  readonly endedAt: number;
}

/** A whole reshard, with when each of its phases began: the removal by its first write at the proxy. */
async function runReshard(registry: MotoRegistry): Promise<ReshardRun> {
  const calledFrom = proxy.calls.length;
  const startedAt = Date.now();
  const cli = startReshard(registry);
  const settling = await cli.lineMatching('stderr', WAITING_LINE);
  const result = await cli.exited;
  const endedAt = Date.now();
  const firstRemoval = proxy.calls
    .slice(calledFrom)
    .find((call) => call.operation === 'PutSecretValue' && call.at > settling.at);
  return { result, startedAt, settlingAt: settling.at, firstRemovalAt: firstRemoval?.at ?? endedAt, endedAt };
}

interface KeysLoaded {
  readonly shard: number;
  /** When its fetch started, epoch ms. */
  readonly startedAt: number;
}

/** The shard loads an environment logged (`keys loaded`), each with when its fetch started. */
function keysLoaded(output: string): KeysLoaded[] {
  return output
    .split('\n')
    .filter((line) => line.includes('"message":"keys loaded"'))
    .map((line) => JSON.parse(line) as { timestamp: string; shard: number; durationMs: number })
    .map(({ timestamp, shard, durationMs }) => ({ shard, startedAt: Date.parse(timestamp) - durationMs }));
}

/**
 * Waits until each of `processes` has read every shard afresh, its fetch begun after `since` (the reshard's last
 * write), and then asked for every app once more: requests went on until each environment had left behind every
 * copy that predates the end of the reshard. Event-driven: the loops run until it is so, however slow the machine.
 */
async function untilEveryShardReadAfter(
  fleet: RunningFleet,
  since: number,
  processes: readonly number[],
): Promise<void> {
  const fresh = (index: number): boolean => {
    const loads = keysLoaded(fleet.output(index));
    return Array.from({ length: 8 }, (_, shard) => shard).every((shard) =>
      loads.some((load) => load.shard === shard && load.startedAt >= since),
    );
  };
  while (!processes.every(fresh)) await new Promise((resolve) => setTimeout(resolve, 50));
  await fleet.passedSince(Date.now(), processes);
}

/** Answers other than 200, as `environment app: status`, for a failure that says which. */
function notServed(invocations: readonly Invocation[]): string[] {
  return invocations
    .filter(({ statusCode }) => statusCode !== 200)
    .map(({ process, stream, statusCode }) => `environment ${process} ${stream}: ${statusCode}`);
}

/** For each of `processes`, the apps it did not ask for within [from, to). */
function missedBetween(
  invocations: readonly Invocation[],
  processes: readonly number[],
  from: number,
  to: number,
): Record<number, string[]> {
  return Object.fromEntries(
    processes.map((index) => {
      const asked = new Set(
        invocations
          .filter(({ process, startedAt }) => process === index && startedAt >= from && startedAt < to)
          .map(({ stream }) => stream),
      );
      return [index, APPS.filter((app) => !asked.has(app))];
    }),
  );
}

const noneMissed = (processes: readonly number[]): Record<number, string[]> =>
  Object.fromEntries(processes.map((index) => [index, []]));

/** Where every app is: the shards holding a copy. */
async function copiesOf(registry: MotoRegistry): Promise<Map<string, number[]>> {
  const documents = await shardDocuments(admin, registry.layout);
  return new Map(
    APPS.map((app) => [
      app,
      [...documents].filter(([, document]) => document.has(app)).map(([index]) => index),
    ]),
  );
}

const homes = (shards: number): Map<string, number[]> =>
  new Map(APPS.map((app) => [app, [shardOf(app, shards)]]));

describe('a reshard from 4 to 8 shards while every app is asked for in a loop, on the built payment Lambda', () => {
  it('has apps on every shard, and apps to move', () => {
    expect(new Set(APPS.map((app) => shardOf(app, 8)))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7]));
    expect(APPS.filter((app) => shardOf(app, 8) !== shardOf(app, 4)).length).toBeGreaterThan(APPS.length / 4);
  });

  it(
    'answers 200 to every request in every environment through the copy, the settle and the removal',
    async () => {
      // Arrange
      const { registry, keys } = await deployedForReshard('ReshardServed');
      const fleet = await fleetOver(registry, requestsOf(keys), LOOPING.length + 1);
      await fleet.passedSince(fleet.startAt);
      await fleet.pause(IDLE);

      // Act
      const { result, startedAt, settlingAt, firstRemovalAt, endedAt } = await runReshard(registry);
      fleet.resume(IDLE);
      await untilEveryShardReadAfter(fleet, endedAt, [...LOOPING, IDLE]);
      const run = await fleet.finish();

      // Assert: the reshard ran its three phases and moved the apps home...
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^moved [1-9]\d* apps home; removed [1-9]\d* old copies; \d+ writes$/m);
      expect(result.stdout).toContain('nothing is left to move');
      expect(firstRemovalAt).toBeLessThan(endedAt);
      expect(await copiesOf(registry)).toEqual(homes(8));
      // ...every environment asked for every app in each phase (the idle one after the removal)...
      expect(missedBetween(run.invocations, LOOPING, startedAt, settlingAt)).toEqual(noneMissed(LOOPING));
      expect(missedBetween(run.invocations, LOOPING, settlingAt, firstRemovalAt)).toEqual(
        noneMissed(LOOPING),
      );
      expect(missedBetween(run.invocations, [...LOOPING, IDLE], firstRemovalAt, Infinity)).toEqual(
        noneMissed([...LOOPING, IDLE]),
      );
      // ...and not one request was refused, nor answered 503.
      expect(notServed(run.invocations)).toEqual([]);

      // And after `cdk deploy -c keyShards=8` (no fallback any more), a new environment serves every app.
      const final = await deployShards(admin, registry, 8);
      const fresh = await invokeAsset(
        assetDir,
        requestsOf(keys).map(({ event }) => event),
        { ...moto.awsEnv, ...final.env, KEY_CACHE_TTL_SECONDS: String(TTL_SECONDS) },
      );
      expect(fresh.results.map(({ statusCode }) => statusCode)).toEqual(APPS.map(() => 200));
    },
    PROOF_TIMEOUT_MS,
  );

  it(
    'answers 200 throughout when the reshard is stopped after its copy, and again when it is run to its end',
    async () => {
      // Arrange
      const { registry, keys } = await deployedForReshard('ReshardStopped');
      const fleet = await fleetOver(registry, requestsOf(keys), LOOPING.length);
      await fleet.passedSince(fleet.startAt);

      // Act: the operator's reshard is killed as it starts to wait; later, it is run again.
      const first = startReshard(registry);
      await first.lineMatching('stderr', WAITING_LINE);
      first.kill('SIGKILL');
      const stopped = await first.exited;
      const stoppedAt = Date.now();
      const leftBehind = await copiesOf(registry);
      await untilEveryShardReadAfter(fleet, stoppedAt, LOOPING);
      const {
        result: rerun,
        startedAt: rerunAt,
        settlingAt,
        firstRemovalAt,
        endedAt,
      } = await runReshard(registry);
      await untilEveryShardReadAfter(fleet, endedAt, LOOPING);
      const run = await fleet.finish();

      // Assert: stopped, every moved app was in both homes; the second run removed the old copies only.
      expect(stopped.code).not.toBe(0);
      const moved = APPS.filter((app) => shardOf(app, 8) !== shardOf(app, 4));
      expect(moved.map((app) => leftBehind.get(app))).toEqual(
        moved.map((app) => [shardOf(app, 8), shardOf(app, 4)].sort((a, b) => a - b)),
      );
      expect(rerun.code).toBe(0);
      expect(rerun.stdout).toMatch(/^moved 0 apps home; removed [1-9]\d* old copies; \d+ writes$/m);
      expect(await copiesOf(registry)).toEqual(homes(8));
      // Every environment asked for every app while the reshard stood stopped, and in each phase of the second run.
      expect(missedBetween(run.invocations, LOOPING, stoppedAt, rerunAt)).toEqual(noneMissed(LOOPING));
      expect(missedBetween(run.invocations, LOOPING, settlingAt, firstRemovalAt)).toEqual(
        noneMissed(LOOPING),
      );
      expect(missedBetween(run.invocations, LOOPING, firstRemovalAt, Infinity)).toEqual(noneMissed(LOOPING));
      expect(notServed(run.invocations)).toEqual([]);
    },
    PROOF_TIMEOUT_MS,
  );
});
