/** Secrets Manager faults, through the fault proxy: in-process for every fault, and on `npm start`. */
import { FAULTS, startFaultProxy, type Fault, type FaultProxy } from '../../test/support/fault-proxy';
import {
  inProcessPaymentService,
  runBrownout,
  runRecovery,
  type Probe,
} from '../../test/support/fault-scenarios';
import { DEMO_KEY } from '../../test/support/keys';
import {
  credentials,
  send,
  startLocalServer,
  stopLocalServer,
} from '../../test/support/local-server-process';
import type { MotoServer } from '../../test/support/moto';
import { EVENT } from './fixtures';
import { fmt } from './stats';

/** The handler as the Lambda composes it, in this process, pointed at `proxy`, with a 1 s TTL. */
function inProcessService(proxy: FaultProxy, secretArn: string, maxStaleMs: number): Probe {
  return inProcessPaymentService(proxy.endpoint, secretArn, { ttlMs: 1_000, maxStaleMs }, EVENT);
}

export async function faultTable(moto: MotoServer, secretArn: string): Promise<string[]> {
  const rows = await Promise.all(
    FAULTS.map(async (fault: Fault) => {
      const stale = await startFaultProxy(moto.port);
      const down = await startFaultProxy(moto.port);
      try {
        const probe = inProcessService(stale, secretArn, 5 * 60_000);
        await probe();
        const brownout = await runBrownout(stale, fault, probe, { ttlMs: 1_000, durationMs: 3_000 });
        await down.setMode(fault);
        const recovery = await runRecovery(down, fault, inProcessService(down, secretArn, 0), {
          outageMs: 2_500,
          limitMs: 5_000,
        });
        const outageSlowest = Math.max(...recovery.outage.map((request) => request.tookMs));
        return (
          `| ${fault} | ${fmt(brownout.slowestMs, 0)} ms (${brownout.requests.length} requests, all 200: ` +
          `${String(brownout.requests.every((request) => request.status === 200))}) | ` +
          `${recovery.recoveryMs === undefined ? 'none' : `${fmt(recovery.recoveryMs, 0)} ms`} | ` +
          `${fmt(outageSlowest, 0)} ms | ${fmt(recovery.outageCallsPerSecond, 2)} |`
        );
      } finally {
        await Promise.all([stale.close(), down.close()]);
      }
    }),
  );
  return [
    '| fault | slowest request, stale keys usable | recovery to first 200, nothing usable | slowest 503 in the outage | GetSecretValue calls/s in the outage |',
    '|---|---|---|---|---|',
    ...rows,
  ];
}

export async function localServerFigures(moto: MotoServer, secretArn: string): Promise<string[]> {
  const lines: string[] = [];
  for (const scenario of ['brownout', 'recovery'] as const) {
    const proxy = await startFaultProxy(moto.port);
    await proxy.setMode(scenario === 'brownout' ? 'pass' : 'black-holed');
    const server = await startLocalServer({
      ...moto.awsEnv,
      AWS_ENDPOINT_URL: proxy.endpoint,
      KEYS_SECRET_ID: secretArn,
      KEY_CACHE_TTL_SECONDS: '1',
      KEY_MAX_STALE_SECONDS: '300',
      LOG_LEVEL: 'error',
      PORT: '0',
    });
    const probe: Probe = async () =>
      (await send(server.baseUrl, { headers: credentials('demo', DEMO_KEY) })).status;
    try {
      if (scenario === 'brownout') {
        await probe();
        const fourAtOnce: Probe = async () => {
          const statuses = await Promise.all([probe(), probe(), probe(), probe()]);
          return Math.max(...statuses);
        };
        const report = await runBrownout(proxy, 'black-holed', fourAtOnce, {
          ttlMs: 1_000,
          durationMs: 5_000,
        });
        lines.push(
          `| npm start, black-holed, stale keys usable: slowest request | ${fmt(report.slowestMs, 0)} ms of ${report.requests.length} |`,
        );
      } else {
        const report = await runRecovery(proxy, 'black-holed', probe, { outageMs: 2_000, limitMs: 5_000 });
        lines.push(
          `| npm start, black-holed, nothing usable: recovery to the first 200 | ${report.recoveryMs === undefined ? 'none' : `${fmt(report.recoveryMs, 0)} ms`} |`,
        );
      }
    } finally {
      await stopLocalServer(server).catch(() => null);
      await proxy.close();
    }
  }
  return lines;
}
