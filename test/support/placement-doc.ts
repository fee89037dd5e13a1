/**
 * docs/keys.md's "Which shard holds an app": the recipe an operator follows by hand, its Python snippet and its
 * worked examples, read from the page so that the tests check what the page says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const KEYS_PAGE = join(__dirname, '..', '..', 'docs', 'keys.md');
const HEADING = '### Which shard holds an app';

/** The section's text, up to the next heading of its level or above. */
export function placementSection(): string {
  const page = readFileSync(KEYS_PAGE, 'utf8');
  const start = page.indexOf(HEADING);
  if (start === -1) throw new Error(`docs/keys.md has no "${HEADING}"`);
  const end = page.slice(start + HEADING.length).search(/\n#{2,3} /);
  return end === -1 ? page.slice(start) : page.slice(start, start + HEADING.length + end);
}

/** The section's one Python block: shard_of.py. */
export function placementSnippet(): string {
  const blocks = [...placementSection().matchAll(/```python\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  if (blocks.length !== 1) throw new Error(`expected one python block, found ${blocks.length}`);
  return blocks[0] ?? '';
}

export interface DocumentedPlacement {
  readonly appId: string;
  readonly shards: number;
  /** The stack the snippet was given; undefined when the example leaves it out. */
  readonly stack?: string;
  /** What the snippet printed: the shard and its secret. */
  readonly shard: number;
  readonly secret: string;
}

/**
 * Every run of the snippet the section shows with its output: `python3 shard_of.py <app> <n> [<stack>]` followed by
 * `# <shard> <secret>` in a shell block, or "`python3 shard_of.py <app> <n>` prints `<shard> <secret>`" in prose.
 */
export function documentedPlacements(): DocumentedPlacement[] {
  const section = placementSection();
  const inBlocks = [...section.matchAll(/^python3 shard_of\.py (\S+) (\d+)(?: (\S+))?\n# (\d+) (\S+)$/gm)];
  const inProse = [
    ...section.matchAll(/`python3 shard_of\.py (\S+) (\d+)(?: (\S+))?` prints `(\d+) (\S+)`/g),
  ];
  return [...inBlocks, ...inProse].map(([, appId = '', shards = '', stack, shard = '', secret = '']) => ({
    appId,
    shards: Number(shards),
    ...(stack === undefined ? {} : { stack }),
    shard: Number(shard),
    secret,
  }));
}
