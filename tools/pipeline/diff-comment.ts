/**
 * The pull request comment of `cdk diff`, one section per stage, with the changes that replace or destroy a
 * resource listed first (.github/workflows/ci.yml posts it, and updates the same comment on each push). Pure: the
 * entry point (bin/diff-comment.ts) reads the files and prints the result.
 */
import { stripVTControlCharacters } from 'node:util';
import { UsageError } from '../common/exit';

/** The first line of the comment: the workflow finds its earlier comment by it, to update rather than add. */
export const DIFF_COMMENT_MARKER = '<!-- payment-api: cdk diff -->';
/** GitHub refuses a comment over 65,536 characters; the rest of the room is the summary's. */
const DIFF_TEXT_BUDGET = 60_000;

export const DIFF_COMMENT_USAGE = `Usage: npm run -s diff-comment -- <stage>=<diff file> [<stage>=<diff file> ...]

Prints the markdown of the pull request comment: for each stage, what its cdk diff (run with --no-color) replaces
or destroys, then the whole diff. Exit codes: 0 printed, 1 a file could not be read, 2 bad usage.
`;

export interface StageDiffFile {
  readonly stage: string;
  readonly file: string;
}

export interface StageDiff {
  readonly stage: string;
  readonly text: string;
}

/** A change that loses a resource: `destroy` (or orphan) removes it; `replace` makes a new one and removes the old. */
export interface RiskyChange {
  readonly kind: 'destroy' | 'replace';
  readonly line: string;
}

const STAGE = /^[A-Za-z](?:[A-Za-z0-9-]{0,22}[A-Za-z0-9])?$/;

/** `<stage>=<file>` arguments; a stage once each. Throws UsageError. */
export function parseDiffCommentArgs(argv: readonly string[]): StageDiffFile[] {
  if (argv.length === 0) throw new UsageError('give at least one <stage>=<diff file>');
  const files = argv.map((argument) => {
    const split = argument.indexOf('=');
    const stage = argument.slice(0, Math.max(split, 0));
    const file = argument.slice(split + 1);
    if (split <= 0 || !STAGE.test(stage) || file === '') {
      throw new UsageError('each argument must be <stage>=<diff file>, the stage an environment name');
    }
    return { stage, file };
  });
  if (new Set(files.map(({ stage }) => stage)).size !== files.length) {
    throw new UsageError('each stage may be given once');
  }
  return files;
}

/**
 * The resources a `cdk diff` destroys or replaces, once each: a resource line `[-] AWS::...` (destroy or orphan),
 * `[~] AWS::... replace`, or a `[~] AWS::...` line with a property under it marked "(requires replacement)" or
 * "(may cause replacement)".
 */
export function riskyChanges(diffText: string): RiskyChange[] {
  const changes: RiskyChange[] = [];
  let resource: { line: string; flagged: boolean } | undefined;
  for (const raw of stripVTControlCharacters(diffText).split('\n')) {
    const line = raw.trim();
    if (/^\[[-+~]\] AWS::/.test(line)) {
      const kind = line.startsWith('[-]') ? 'destroy' : / replace$/.test(line) ? 'replace' : undefined;
      resource = { line, flagged: kind !== undefined };
      if (kind !== undefined) changes.push({ kind, line });
    } else if (/\((requires|may cause) replacement\)/.test(line) && resource && !resource.flagged) {
      const property = line.replace(/^[└├│─\s]+/, '');
      changes.push({ kind: 'replace', line: `${resource.line}: ${property}` });
      resource.flagged = true;
    } else if (!/^[└├│─ ]/.test(raw) && line !== '') {
      resource = undefined;
    }
  }
  return changes;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}diff\n${text}\n${ticks}`;
}

/** The comment's markdown. */
export function renderDiffComment(diffs: readonly StageDiff[], runUrl?: string): string {
  const budget = Math.floor(DIFF_TEXT_BUDGET / Math.max(diffs.length, 1));
  const lines = [DIFF_COMMENT_MARKER, '## cdk diff', ''];
  lines.push('| Stage | Destroys | Replaces |', '| ----- | -------- | -------- |');
  const risky = diffs.map(({ stage, text }) => ({ stage, changes: riskyChanges(text) }));
  for (const { stage, changes } of risky) {
    const destroys = changes.filter(({ kind }) => kind === 'destroy').length;
    const replaces = changes.length - destroys;
    const mark = (count: number): string => (count === 0 ? '0' : `**${count}** :warning:`);
    lines.push(`| ${stage} | ${mark(destroys)} | ${mark(replaces)} |`);
  }
  lines.push('');
  for (const [index, { stage, text }] of diffs.entries()) {
    const changes = risky[index]?.changes ?? [];
    const clean = stripVTControlCharacters(text).trim();
    lines.push(`### ${stage}`, '');
    if (changes.length > 0) {
      lines.push(
        `:warning: **${plural(changes.length, 'change')} that replace or destroy a resource** (data in it is lost unless it is retained):`,
        '',
        ...changes.map(({ kind, line }) => `- **${kind}**: \`${line.replaceAll('`', "'")}\``),
        '',
      );
    }
    const shown =
      clean.length > budget ? `${clean.slice(0, budget)}\n... (cut: the job's log has it all)` : clean;
    lines.push('<details><summary>The whole diff</summary>', '', fence(shown), '', '</details>', '');
  }
  if (runUrl !== undefined) lines.push(`From [this run](${runUrl}).`);
  return `${lines.join('\n').trimEnd()}\n`;
}
