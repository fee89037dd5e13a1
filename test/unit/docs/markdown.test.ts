import * as path from 'node:path';
import {
  brokenLinkReason,
  githubSlug,
  headingAnchors,
  markdownLinks,
  PROJECT_ROOT,
} from '../../support/markdown';

const README = path.join(PROJECT_ROOT, 'README.md');

describe('githubSlug', () => {
  it.each([
    ['ApiServerErrors', 'apiservererrors'],
    ['Firewall (WAF)', 'firewall-waf'],
    ["The secret's format", 'the-secrets-format'],
    ['Settings per environment in cdk.json', 'settings-per-environment-in-cdkjson'],
    ['By hand, with the AWS CLI', 'by-hand-with-the-aws-cli'],
    ['Zero-downtime rotation', 'zero-downtime-rotation'],
    ['`ApiLatencyP99` alarm', 'apilatencyp99-alarm'],
    ['[Unreleased]', 'unreleased'],
    ['See [the keys](keys.md) page', 'see-the-keys-page'],
    ['snake_case stays', 'snake_case-stays'],
  ])('turns the heading %j into the anchor %j, as GitHub does', (heading, anchor) => {
    expect(githubSlug(heading)).toBe(anchor);
  });
});

describe('headingAnchors', () => {
  it('suffixes a repeated heading -1, -2 in order', () => {
    const page = '# Notes\n\n## Setup\n\ntext\n\n## Setup\n\n### Setup\n';

    expect([...headingAnchors(page)]).toEqual(['notes', 'setup', 'setup-1', 'setup-2']);
  });

  it('ignores lines that only look like headings inside fenced code', () => {
    const page = '# Title\n\n```sh\n# a shell comment\n```\n\n~~~\n## not a heading\n~~~\n';

    expect([...headingAnchors(page)]).toEqual(['title']);
  });
});

describe('markdownLinks', () => {
  it('finds links, images and reference definitions with their line numbers', () => {
    const page = [
      'See [the contract](docs/contract.md#errors) and ![diagram](<images/arch.png> "the picture").',
      '',
      '[keys]: docs/keys.md',
    ].join('\n');

    expect(markdownLinks(page)).toEqual([
      { line: 1, target: 'docs/contract.md#errors' },
      { line: 1, target: 'images/arch.png' },
      { line: 3, target: 'docs/keys.md' },
    ]);
  });

  it('skips what only looks like a link inside inline code and fenced code', () => {
    const page = 'Write `[text](missing.md)` for a link.\n\n```md\n[text](also-missing.md)\n```\n';

    expect(markdownLinks(page)).toEqual([]);
  });
});

describe('brokenLinkReason', () => {
  it('accepts a link to an existing page, to one of its headings, and to a folder', () => {
    expect(brokenLinkReason(README, 'docs/operations.md#keysunavailable')).toBeUndefined();
    expect(brokenLinkReason(README, '#documentation')).toBeUndefined();
    expect(brokenLinkReason(README, 'lib')).toBeUndefined();
  });

  it('names the missing file, or the missing anchor and its page', () => {
    expect(brokenLinkReason(README, 'docs/nowhere.md')).toBe('no such file: docs/nowhere.md');
    expect(brokenLinkReason(README, 'docs/operations.md#nowhere')).toBe(
      'no heading with the anchor #nowhere in docs/operations.md',
    );
    expect(brokenLinkReason(README, 'package.json#scripts')).toBe(
      'an anchor on a file that is not a Markdown page: package.json',
    );
  });
});
