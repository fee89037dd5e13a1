import fc from 'fast-check';
import { KeysUnavailableError, type KeyringProvider } from '../../../../lambda/payment/key-cache';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { createHandler } from '../../../../lambda/payment/create-handler';
import { isLogField } from '../../../../shared/log-fields';
import { captureLogs } from '../../../support/capture-logger';
import {
  CONTRACT_NOW,
  eventArb,
  headerPairsArb,
  keyringArb,
  secretOf,
  type AppSpec,
} from '../../../support/properties/arbitraries';
import { apiGatewayHeaderMaps } from '../../../support/events';
import {
  EXPECTED_CODE,
  expectedHeaders,
  expectedStatus,
  headerValuesModel,
  keyAcceptedModel,
  requestIdModel,
  sourceIpModel,
  type ExpectedStatus,
  type KeyringModel,
} from '../../../support/properties/contract-model';
import { expectToBe, expectToEqual } from '../../../support/properties/cheap-expect';

/**
 * How many events the contract property tries. At 500, each status of the contract comes up 25 to 330 times a run
 * and each key rule (accepted, expired, refused for its network) 50 to 200 times, so a fault on any line of the
 * contract fails the run with certainty, while the run takes seconds. The coverage checks below fail the test if
 * the generators ever stop reaching a line as often, so a smaller count can never pass by missing one.
 */
const RUNS = 500;

function keyringModelOf(apps: readonly AppSpec[]): KeyringModel {
  return new Map(
    apps.map(({ appId, keys, allowedCidrs }) => [
      appId,
      { keys: keys.map(({ key, expiresAt }) => ({ key, expiresAt })), allowedCidrs },
    ]),
  );
}

/** Why the model refuses a request whose credentials name a real app with one of its keys, if it does. */
type KeyRuleOutcome = 'accepted' | 'expired' | 'network' | 'other';

function keyRuleOutcome(event: unknown, keyring: KeyringModel): KeyRuleOutcome {
  const [appId = '', appKey = ''] = [
    headerValuesModel(event, 'App-Id')[0],
    headerValuesModel(event, 'App-Key')[0],
  ];
  const app = keyring.get(appId);
  const key = app?.keys.find((candidate) => candidate.key === appKey);
  if (app === undefined || key === undefined) return 'other';
  if (keyAcceptedModel(app, appKey, CONTRACT_NOW, sourceIpModel(event))) return 'accepted';
  return key.expiresAt !== undefined && key.expiresAt <= CONTRACT_NOW ? 'expired' : 'network';
}

function providerOf(apps: readonly AppSpec[], readable: boolean): KeyringProvider {
  const { keyring } = parseKeyring(secretOf(apps));
  return {
    getKeys: () =>
      readable
        ? Promise.resolve({ keyring, stale: false })
        : Promise.reject(new KeysUnavailableError('keys have never loaded')),
  };
}

const scenarioArb = keyringArb.chain((apps) =>
  fc.record({
    apps: fc.constant(apps),
    event: eventArb(apps),
    keysReadable: fc.oneof(
      { weight: 9, arbitrary: fc.constant(true) },
      { weight: 1, arbitrary: fc.constant(false) },
    ),
  }),
);

describe('the handler against a model of the contract', () => {
  it('answers every event, however malformed, with the status, body and headers the contract gives', async () => {
    const seen = new Map<number, number>();
    const ruleOutcomes = new Map<KeyRuleOutcome, number>();
    const statusesByReason = new Map<unknown, Set<unknown>>();

    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ apps, event, keysReadable }) => {
        const logs = captureLogs();
        const handle = createHandler({
          keys: providerOf(apps, keysReadable),
          logger: logs.logger,
          now: () => CONTRACT_NOW,
        });

        const result = await handle(event);

        const keyring = keyringModelOf(apps);
        const status: ExpectedStatus = expectedStatus(event, keyring, keysReadable, CONTRACT_NOW);
        seen.set(status, (seen.get(status) ?? 0) + 1);
        const outcome = keyRuleOutcome(event, keyring);
        ruleOutcomes.set(outcome, (ruleOutcomes.get(outcome) ?? 0) + 1);
        expectToBe(result.statusCode, status);
        expectToEqual(result.headers, expectedHeaders(status, requestIdModel(event)));
        expectToBe(result.multiValueHeaders, undefined);
        if (result.isBase64Encoded) expect(result.isBase64Encoded).toBeFalsy();
        const body = JSON.parse(result.body) as { code: unknown; message: unknown };
        expectToEqual(Object.keys(body).sort(), ['code', 'message']);
        expectToBe(body.code, EXPECTED_CODE[status]);
        expectToBe(typeof body.message === 'string' && body.message.length > 0, true);
        if (status === 401) {
          expectToBe(
            result.body,
            '{"code":"unauthorized","message":"Missing or invalid App-id or App-key."}',
          );
        }

        // One vocabulary: every field is a known one, and each reason goes with one status only.
        for (const entry of logs.entries()) {
          expectToEqual(
            Object.keys(entry).filter((name) => !isLogField(name)),
            [],
          );
          if (entry.reason !== undefined) {
            statusesByReason.set(
              entry.reason,
              (statusesByReason.get(entry.reason) ?? new Set()).add(entry.status),
            );
          }
        }

        // No presented key (of a length worth hiding) reaches the logs, whatever the outcome.
        const logged = logs.lines.join('\n');
        for (const presented of headerValuesModel(event, 'App-Key').filter((key) => key.length >= 16)) {
          const shown = JSON.stringify(presented).slice(1, -1);
          if (logged.includes(shown)) expect(logged).not.toContain(shown);
        }
      }),
      { numRuns: RUNS },
    );

    // The generators reach every line of the contract often, not just the easy 401: a right key refused for its
    // expiry or its network as well as accepted.
    for (const status of [200, 400, 401, 415, 503]) {
      expect(seen.get(status) ?? 0).toBeGreaterThan(RUNS / 100);
    }
    for (const outcome of ['accepted', 'expired', 'network'] as const) {
      expect(ruleOutcomes.get(outcome) ?? 0).toBeGreaterThan(RUNS / 100);
    }
    const reasonsWithSeveralStatuses = [...statusesByReason].filter(([, statuses]) => statuses.size > 1);
    expect(reasonsWithSeveralStatuses).toEqual([]);
    expect(statusesByReason.size).toBeGreaterThan(10);
  });

  it('gives the same answer whether headers arrive in one map or both, as API Gateway sends them', async () => {
    await fc.assert(
      fc.asyncProperty(
        keyringArb.chain((apps) => fc.tuple(fc.constant(apps), headerPairsArb(apps))),
        async ([apps, pairs]) => {
          // Without repeats, headers alone says what both maps say.
          fc.pre(new Set(pairs.map(([name]) => name.toLowerCase())).size === pairs.length);
          const handle = createHandler({
            keys: providerOf(apps, true),
            logger: captureLogs().logger,
            now: () => CONTRACT_NOW,
          });
          const maps = apiGatewayHeaderMaps(pairs);

          const both = await handle({ ...maps, requestContext: { requestId: 'r-1' } });
          const singleOnly = await handle({ headers: maps.headers, requestContext: { requestId: 'r-1' } });
          const multiOnly = await handle({
            multiValueHeaders: maps.multiValueHeaders,
            requestContext: { requestId: 'r-1' },
          });

          expectToEqual(singleOnly, both);
          expectToEqual(multiOnly, both);
        },
      ),
      // Each run compares three requests built from the same header pairs: 200 runs are 600 requests.
      { numRuns: 200 },
    );
  });
});
