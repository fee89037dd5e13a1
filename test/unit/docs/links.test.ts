import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { brokenLinkReason, isExternal, markdownLinks, PROJECT_ROOT } from '../../support/markdown';

const DOCS = path.join(PROJECT_ROOT, 'docs');
const README = path.join(PROJECT_ROOT, 'README.md');

const DOC_PAGES = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .map((name) => path.join(DOCS, name));
const PAGES = [README, path.join(PROJECT_ROOT, 'CHANGELOG.md'), ...DOC_PAGES];

const relative = (file: string): string => path.relative(PROJECT_ROOT, file);

/** `file:line target: reason` for each relative link of the page that does not resolve. */
function brokenLinks(file: string): string[] {
  return markdownLinks(readFileSync(file, 'utf8'))
    .filter(({ target }) => !isExternal(target))
    .flatMap(({ line, target }) => {
      const reason = brokenLinkReason(file, target);
      return reason === undefined ? [] : [`${relative(file)}:${line} ${target}: ${reason}`];
    });
}

describe('links between the pages', () => {
  it.each(PAGES.map((file) => [relative(file), file]))(
    'every relative link and image in %s points at a file that exists, and every anchor at a heading',
    (_name, file) => {
      expect(brokenLinks(file)).toEqual([]);
    },
  );

  it("README's documentation index links to every page of docs/", () => {
    const readmeTargets = new Set(markdownLinks(readFileSync(README, 'utf8')).map(({ target }) => target));

    const unlisted = DOC_PAGES.map(relative).filter((page) => !readmeTargets.has(page));

    expect(unlisted).toEqual([]);
  });
});
