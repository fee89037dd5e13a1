import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { createApp } from '../../../bin/payment-api';
import { parseDiffCommentArgs } from '../../../tools/pipeline/diff-comment';
import { parseSmokeInvocation } from '../../../tools/smoke/args';
import { unbundledApp } from '../../support/construct-template';
import { commandLines, readWorkflow, words, workflowFiles } from './workflows';

const PACKAGE = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** How each script a workflow may call takes its arguments (after `--`): throws on what it would refuse. */
const ARGUMENT_PARSERS: Record<string, (args: readonly string[]) => void> = {
  smoke: (args) => {
    const invocation = parseSmokeInvocation(args, {});
    if (invocation.kind !== 'run') throw new Error('npm run smoke would only print its help');
  },
  'diff-comment': (args) => {
    parseDiffCommentArgs(args);
  },
};

interface NpmCall {
  readonly file: string;
  readonly script: string;
  readonly args: readonly string[];
}

/** `npm test`, `npm run [-s] <script> [-- args]`; npm ci and other npm commands are npm's own. */
function npmCalls(): NpmCall[] {
  return workflowFiles().flatMap((file) =>
    commandLines(readWorkflow(file))
      .map((line) => words(line.replace(/\s*[|>].*$/, '')))
      .filter((argv) => argv[0] === 'npm' && (argv[1] === 'run' || argv[1] === 'test'))
      .map((argv) => {
        if (argv[1] === 'test') return { file, script: 'test', args: argv.slice(2) };
        const rest = argv.slice(2).filter((word) => word !== '-s');
        const separator = rest.indexOf('--');
        return { file, script: rest[0] ?? '', args: separator === -1 ? [] : rest.slice(separator + 1) };
      }),
  );
}

/** Each `npx cdk` line: its command, its `-c key=value` context, and the stacks it names. */
function cdkCalls(): { file: string; command: string; context: Record<string, string>; stacks: string[] }[] {
  return workflowFiles().flatMap((file) =>
    commandLines(readWorkflow(file))
      .map((line) => words(line.replace(/\s*(?:2>&1|[|>]).*$/, '')))
      .filter((argv) => argv[0] === 'npx' && argv[1] === 'cdk')
      .map((argv) => {
        const context: Record<string, string> = {};
        const stacks: string[] = [];
        for (let index = 3; index < argv.length; index += 1) {
          const word = argv[index] ?? '';
          if (word === '-c' || word === '--context') {
            const [key = '', value = ''] = (argv[(index += 1)] ?? '').split('=');
            context[key] = value;
          } else if (['--app', '--method', '--require-approval'].includes(word)) index += 1;
          else if (!word.startsWith('-')) stacks.push(word);
        }
        return { file, command: argv[2] ?? '', context, stacks };
      }),
  );
}

describe('what the workflows call', () => {
  it("runs npm test, README's test command, in CI", () => {
    expect(npmCalls().filter(({ file, script }) => file === 'ci.yml' && script === 'test')).toHaveLength(1);
  });

  it.each(
    npmCalls().map((call) => [`${call.file}: npm run ${call.script} ${call.args.join(' ')}`, call] as const),
  )('%s: a script of package.json, with arguments it accepts', (_name, { script, args }) => {
    expect(Object.keys(PACKAGE.scripts)).toContain(script);
    if (args.length > 0) {
      const parse = ARGUMENT_PARSERS[script];
      expect({ script, knowsItsArguments: parse !== undefined }).toEqual({ script, knowsItsArguments: true });
      expect(() => parse?.(args)).not.toThrow();
    }
  });

  it('names only stacks that the synth of its own workflow makes', () => {
    // Arrange: the stacks each workflow's one synth makes.
    const synthesized = new Map<string, string[]>();
    for (const { file, command, context } of cdkCalls().filter((call) => call.command === 'synth')) {
      expect(synthesized.has(file)).toBe(false);
      const app = createApp(unbundledApp(context));
      synthesized.set(
        file,
        app.node.children.filter((child) => child instanceof Stack).map((stack) => stack.node.id),
      );
      expect(command).toBe('synth');
    }
    const named = cdkCalls().filter((call) => call.command !== 'synth');
    const smoked = npmCalls().filter((call) => call.script === 'smoke');

    // Assert
    expect(named.length).toBeGreaterThan(0);
    for (const { file, command, stacks } of named) {
      expect({ file, command, stacks: stacks.length }).toEqual({ file, command, stacks: 1 });
      expect(synthesized.get(file)).toEqual(expect.arrayContaining(stacks));
    }
    for (const { file, args } of smoked) {
      expect(synthesized.get(file)).toContain(args[args.indexOf('--stack') + 1]);
    }
  });
});
