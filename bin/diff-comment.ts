// The pull request comment of cdk diff (the CI workflow's diff job): `npm run -s diff-comment -- staging=staging.diff`.
// All logic is in tools/pipeline/.
import { readFile } from 'node:fs/promises';
import { errorLine, exitCodeOf, UsageError } from '../tools/common/exit';
import { DIFF_COMMENT_USAGE, parseDiffCommentArgs, renderDiffComment } from '../tools/pipeline/diff-comment';

async function main(argv: readonly string[]): Promise<number> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(DIFF_COMMENT_USAGE);
      return 0;
    }
    const files = parseDiffCommentArgs(argv);
    const diffs = await Promise.all(
      files.map(async ({ stage, file }) => ({ stage, text: await readFile(file, 'utf8') })),
    );
    const { GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID } = process.env;
    const runUrl =
      GITHUB_SERVER_URL && GITHUB_REPOSITORY && GITHUB_RUN_ID
        ? `${GITHUB_SERVER_URL}/${GITHUB_REPOSITORY}/actions/runs/${GITHUB_RUN_ID}`
        : undefined;
    process.stdout.write(renderDiffComment(diffs, runUrl));
    return 0;
  } catch (error) {
    process.stderr.write(errorLine(error, [UsageError]));
    if (error instanceof UsageError) process.stderr.write(DIFF_COMMENT_USAGE);
    return exitCodeOf(error);
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
