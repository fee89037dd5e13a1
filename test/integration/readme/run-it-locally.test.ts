/**
 * README's "Run it locally", as a newcomer follows it: every `sh` block of the section runs as written, in order,
 * against servers this test starts; the Node.js example of "Call it" runs against the same server. Two
 * substitutions only, so nothing touches the developer's own server or keys: the server's address for
 * 127.0.0.1:3000 (a free port), and a key file of the test's own for .local/keys.json. Variables a block exports
 * are there for the next, as in one terminal. The outputs the README shows in comments (`# HTTP/1.1 200 OK ...`,
 * `# {"code":...}`, `# rate limits: ...`) must appear, each fragment between ` ... `.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  killAllLocalServers,
  SETUP_TIMEOUT_MS,
  startLocalServer,
  stopLocalServer,
  type LocalServerProcess,
} from '../../support/local-server-process';
import { freeLoopbackPort } from '../../support/loopback';
import { PROJECT_ROOT } from '../../support/openapi-document';
import { spawnTool } from '../../support/tool-process';

const README = join(PROJECT_ROOT, 'README.md');
const DOCUMENTED_URL = 'http://127.0.0.1:3000';
const DOCUMENTED_KEYS_FILE = '.local/keys.json';
const SERVER_START = /^((?:[A-Z_]+=\S+\s+)*)npm start(?:\s|$)/;
const SHOWN_OUTPUT = /^# (HTTP\/|\{|rate limits:)/;

/** The fenced blocks of one `## ` section, with their info string. */
function fencedBlocks(markdown: string, heading: string): { info: string; code: string }[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`README has no section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({
    info: match[1] ?? '',
    code: match[2] ?? '',
  }));
}

/** What the README says a command prints, as fragments that must each appear. */
function shownOutput(code: string): string[] {
  return code
    .split('\n')
    .filter((line) => SHOWN_OUTPUT.test(line))
    .flatMap((line) => line.slice(2).split(' ... '));
}

let work: string;
let keysFile: string;
let state: string;
let server: LocalServerProcess | undefined;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'payment-api-readme-'));
  keysFile = join(work, 'local', 'keys.json');
  state = join(work, 'shell-state.sh');
  await writeFile(state, '');
});

afterAll(async () => {
  if (server !== undefined) await stopLocalServer(server);
  killAllLocalServers();
  await rm(work, { recursive: true, force: true });
});

async function startAsDocumented(code: string): Promise<LocalServerProcess> {
  if (server !== undefined) await stopLocalServer(server);
  const command = code.split('\n').find((line) => SERVER_START.test(line)) ?? '';
  const assignments = (SERVER_START.exec(command)?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
  const env = Object.fromEntries(
    assignments.map((assignment) => assignment.split('=', 2) as [string, string]),
  );
  server = await startLocalServer({ ...env, PORT: String(await freeLoopbackPort()), KEYS_FILE: keysFile });
  return server;
}

/** Runs a block in bash as one terminal would: what earlier blocks exported is there; what it exports is kept. */
function runInShell(code: string, baseUrl: string): ReturnType<typeof spawnTool> {
  const adapted = code
    .replaceAll(DOCUMENTED_URL, baseUrl)
    .replaceAll(`./${DOCUMENTED_KEYS_FILE}`, keysFile)
    .replaceAll(DOCUMENTED_KEYS_FILE, keysFile);
  const script = `set -eo pipefail\nsource ${JSON.stringify(state)}\n${adapted}\nexport -p > ${JSON.stringify(state)}\n`;
  return spawnTool('bash', ['-c', script], { npm_config_update_notifier: 'false' });
}

describe("README's Run it locally", () => {
  const markdown = readFileSync(README, 'utf8');
  const blocks = fencedBlocks(markdown, 'Run it locally');

  it('has commands to run: servers to start and calls to make', () => {
    expect(blocks.every(({ info }) => info === 'sh')).toBe(true);
    expect(
      blocks.filter(({ code }) => code.split('\n').some((line) => SERVER_START.test(line))),
    ).toHaveLength(2);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
  });

  it(
    'works as written, block by block, with the Node.js example of "Call it" against the same server',
    async () => {
      let current: LocalServerProcess | undefined;
      for (const { code } of blocks) {
        if (code.split('\n').some((line) => SERVER_START.test(line))) {
          current = await startAsDocumented(code);
          for (const fragment of shownOutput(code)) expect(current.output()).toContain(fragment);
          continue;
        }
        if (current === undefined) throw new Error('README calls the server before it starts one');
        const run = await runInShell(code, current.baseUrl);

        // stderr holds curl's progress meter: the exit code (set -e, pipefail) says whether every command succeeded.
        expect([code, run.code, run.code === 0 ? '' : run.stderr]).toEqual([code, 0, '']);
        for (const fragment of shownOutput(code))
          expect([code, run.stdout]).toEqual([code, expect.stringContaining(fragment)]);

        if (code.includes('export APP_KEY PAYMENT_URL')) {
          // "The Node.js and Python examples under Call it work unchanged with these two variables."
          const [snippet] = fencedBlocks(markdown, 'Call it').filter(({ info }) => info === 'js');
          const file = join(work, 'call-it.mjs');
          await writeFile(file, snippet?.code ?? '');
          const node = await spawnTool(
            'bash',
            ['-c', `source ${JSON.stringify(state)}\nnode ${JSON.stringify(file)}`],
            {},
          );

          expect([node.code, node.stderr]).toEqual([0, '']);
          expect(node.stdout).toMatch(/^200 \{ code: 'ok', message: 'Payment request accepted\.' \}/);
        }
      }
      // The key never reached a command line or the server's output: it went through variables and pipes.
      const key = (JSON.parse(await readFile(keysFile, 'utf8')) as { demo: string[] }).demo[0] ?? '';
      expect(key).toMatch(/^pay_[0-9A-Za-z]{38}$/);
      expect(current?.output()).not.toContain(key);
    },
    SETUP_TIMEOUT_MS,
  );
});
