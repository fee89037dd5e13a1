/**
 * How long `npx cdk synth PaymentApiPipelineAccess -c githubRepository=...` takes, as an operator runs it once: the
 * CLI, the app (tsx), cdk-nag, and the template written. Wall time and the CPU time of the whole process tree
 * (bash's `time`), since on a shared machine the wall time mostly measures the other processes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spread } from './stats';

const RUNS = 5;
const COMMAND =
  'npx cdk synth PaymentApiPipelineAccess --quiet -c githubRepository=octo-org/payment-api --output "$OUT"';

export function pipelineSynthLines(): string[] {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const out = mkdtempSync(join(tmpdir(), 'pipeline-synth-'));
    try {
      const result = spawnSync('bash', ['-c', `TIMEFORMAT='%R %U %S'; time (${COMMAND} > /dev/null)`], {
        cwd: join(__dirname, '..', '..'),
        env: { ...process.env, OUT: out },
        encoding: 'utf8',
      });
      if (result.status !== 0) throw new Error(`cdk synth of the access stack failed: ${result.stderr}`);
      const [real = NaN, user = NaN, sys = NaN] = (result.stderr.trim().split('\n').at(-1) ?? '')
        .split(' ')
        .map(Number);
      wall.push(real);
      cpu.push(user + sys);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
  return [
    `Synthesizing the pipeline access stack (cdk synth PaymentApiPipelineAccess, ${RUNS} runs):`,
    `  wall ${spread(wall, 1, ' s')}`,
    `  CPU (user + system, every process) ${spread(cpu, 1, ' s')}`,
  ];
}
