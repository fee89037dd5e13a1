/** The auth decision's cost per call, for each way a request can end. */
import { authenticate } from '../../shared/keys/authenticate';
import { parseKeyring } from '../../shared/keys/keyring';
import { SECRET_STRING } from '../../test/support/keys';
import { median } from './stats';

/** Median ns per authenticate() call for each case, rounds interleaved so JIT warm-up and noise hit all alike. */
export function timeAuthenticate(
  cases: ReadonlyArray<readonly [string, string]>,
  callsPerRound: number,
): number[] {
  const { keyring } = parseKeyring(SECRET_STRING);
  const samples = cases.map(() => [] as number[]);
  for (let round = 0; round < 60; round++) {
    cases.forEach(([appId, appKey], index) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < callsPerRound; i++)
        authenticate({ appId, appKey }, keyring, { now: Date.now(), sourceIp: '203.0.113.9' });
      if (round >= 10) samples[index]?.push(Number(process.hrtime.bigint() - start) / callsPerRound);
    });
  }
  return samples.map(median);
}
