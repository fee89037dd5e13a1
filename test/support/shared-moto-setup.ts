/**
 * The integration project's globalSetup: one moto server per jest worker, listening before any suite runs (so no
 * suite's free port can be one of theirs). A suite that needs only a clean moto for its lifetime asks for it with `sharedMoto()` (moto.ts),
 * which waits until its worker's server listens and resets it: a suite starts from an empty moto as with a server
 * of its own, without paying for Python, moto and each service's first load once per suite. Suites that stop moto
 * on purpose, or need two at once, still start their own with `startMoto()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { canConnect, freeLoopbackPort } from './loopback';
import { motoServerCommand, SHARED_MOTO_PORTS, stopMotoProcess } from './moto';

/** The servers this run started, for globalTeardown (which runs in the same process). */
const RUNNING = Symbol.for('payment-api.shared-moto');

type WithServers = typeof globalThis & { [RUNNING]?: ChildProcess[] };

export default async function startSharedMoto(globalConfig: { maxWorkers: number }): Promise<void> {
  const ports = await Promise.all(
    Array.from({ length: Math.max(1, globalConfig.maxWorkers) }, () => freeLoopbackPort()),
  );
  (globalThis as WithServers)[RUNNING] = ports.map((port) =>
    spawn(motoServerCommand(), ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' }),
  );
  const deadline = Date.now() + 60_000;
  for (const port of ports) {
    while (!(await canConnect(port))) {
      if (Date.now() > deadline) {
        await stopSharedMoto();
        throw new Error(
          `moto_server did not listen on 127.0.0.1:${port}: run "bash scripts/python-tools.sh"`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  // Workers start after globalSetup, with this environment.
  process.env[SHARED_MOTO_PORTS] = ports.join(',');
}

/**
 * Stops the servers and waits until each has exited: a child still running keeps jest's process alive past the run
 * ("Jest did not exit one second after the test run has completed").
 */
export async function stopSharedMoto(): Promise<void> {
  await Promise.all(((globalThis as WithServers)[RUNNING] ?? []).map(stopMotoProcess));
}
