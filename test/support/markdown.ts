/**
 * Just enough Markdown to check links: the headings a page can be linked to (with GitHub's anchors) and the
 * links and images it holds. Fenced code blocks and inline code are text, not Markdown, so they are skipped.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

export const PROJECT_ROOT = path.join(__dirname, '..', '..');

const FENCE = /^\s{0,3}(```|~~~)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
/** `[text](target)` or `![alt](target)`, the target optionally in `<>` and followed by a title. */
const INLINE_LINK = /!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g;
/** `[label]: target`, a reference definition. */
const REFERENCE_DEFINITION = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/;
const INLINE_CODE = /(`+)[\s\S]*?\1/g;
/** A scheme (`https:`, `mailto:`): the link leaves the repository. */
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

export interface MarkdownLink {
  /** 1-based line of the page, for the failure message. */
  readonly line: number;
  readonly target: string;
}

/** The page's lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = FENCE.exec(text)?.[1];
    if (marker !== undefined && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) lines.push({ text, line: index + 1 });
  });
  return lines;
}

/**
 * GitHub's anchor for a heading: its text as rendered (link and image syntax reduced to their text, code and
 * emphasis marks dropped), lower case, every character but letters, digits, `_`, `-` and spaces dropped, then each
 * space turned into `-`.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[((?:[^\]\\]|\\.)*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/<[^>]+>/g, '');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page's headings define, a repeated one suffixed `-1`, `-2`, ... as GitHub does. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = HEADING.exec(text)?.[2];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every link and image target on the page, outside code. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = text.replace(INLINE_CODE, '');
    for (const match of prose.matchAll(INLINE_LINK)) links.push({ line, target: unbracket(match[1] ?? '') });
    const definition = REFERENCE_DEFINITION.exec(prose)?.[1];
    if (definition !== undefined) links.push({ line, target: unbracket(definition) });
  }
  return links;
}

/** A link's part with its percent-escapes decoded; null when they are malformed. */
function decoded(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

function unbracket(target: string): string {
  return target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target;
}

export function isExternal(target: string): boolean {
  return EXTERNAL.test(target);
}

/**
 * Why a relative link from `fromFile` does not resolve, or undefined when it does: its path must name a file or
 * folder of the repository, and its `#anchor`, if any, a heading of the Markdown page it names.
 */
export function brokenLinkReason(fromFile: string, target: string): string | undefined {
  const hashAt = target.indexOf('#');
  const pathPart = decoded(hashAt === -1 ? target : target.slice(0, hashAt));
  const anchor = hashAt === -1 ? undefined : decoded(target.slice(hashAt + 1));
  if (pathPart === null || anchor === null) return 'malformed percent-encoding';
  const resolved =
    pathPart === ''
      ? fromFile
      : pathPart.startsWith('/')
        ? path.join(PROJECT_ROOT, pathPart)
        : path.resolve(path.dirname(fromFile), pathPart);

  if (!existsSync(resolved)) return `no such file: ${path.relative(PROJECT_ROOT, resolved)}`;
  if (anchor === undefined) return undefined;
  if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) {
    return `an anchor on a file that is not a Markdown page: ${path.relative(PROJECT_ROOT, resolved)}`;
  }
  if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
    return `no heading with the anchor #${anchor} in ${path.relative(PROJECT_ROOT, resolved)}`;
  }
  return undefined;
}
