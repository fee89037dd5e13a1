/**
 * The operator tools are separate programs on a common base: none imports another's files. Read from the
 * sources, so a new import that crosses a boundary fails here rather than in review.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const PROJECT_ROOT = resolve(__dirname, '..', '..', '..', '..');
const TOOLS = join(PROJECT_ROOT, 'tools');
const COMMON = 'common';

/** Besides its own folder, tools/common/ and shared/, what each tool may import from the project. */
const ALSO_ALLOWED: Readonly<Record<string, (path: string) => boolean>> = {
  // The local server runs the payment handler itself.
  'local-server': (path) => path.startsWith('lambda/payment/'),
};

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier of a file: static imports and re-exports, `import()` and `require()`. */
function importSpecifiers(source: string): string[] {
  const patterns = [
    /\b(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  return patterns.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1] ?? ''));
}

/** A relative specifier as a project path (`shared/errors.ts`); packages and node built-ins are not the project's. */
function projectPath(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return `${relative(PROJECT_ROOT, resolve(dirname(file), specifier))
    .split(sep)
    .join('/')}.ts`;
}

function toolOf(path: string): string | undefined {
  const [top, tool] = path.split('/');
  return top === 'tools' ? tool : undefined;
}

function allowed(tool: string, target: string): boolean {
  if (target.startsWith('shared/')) return true;
  const targetTool = toolOf(target);
  if (targetTool !== undefined) return targetTool === tool || targetTool === COMMON;
  return tool !== COMMON && (ALSO_ALLOWED[tool]?.(target) ?? false);
}

const tools = readdirSync(TOOLS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

const imports = tools.flatMap((tool) =>
  sourceFiles(join(TOOLS, tool)).flatMap((file) =>
    importSpecifiers(readFileSync(file, 'utf8')).flatMap((specifier) => {
      const target = projectPath(file, specifier);
      return target === undefined ? [] : [{ tool, file: relative(PROJECT_ROOT, file), target }];
    }),
  ),
);

describe('the operator tools', () => {
  it.each(tools.filter((tool) => tool !== COMMON))('%s builds on tools/common', (tool) => {
    expect(imports.some((entry) => entry.tool === tool && toolOf(entry.target) === COMMON)).toBe(true);
  });

  it("import nothing of one another's: only their own folder, tools/common and shared/ (and what each runs)", () => {
    const crossings = imports
      .filter(({ tool, target }) => !allowed(tool, target))
      .map(({ file, target }) => `${file} imports ${target}`);

    expect(crossings).toEqual([]);
  });
});

describe('importSpecifiers', () => {
  it('finds imports, type imports, re-exports, side-effect imports, import() and require()', () => {
    const source = [
      "import { a } from '../keys/a';",
      "import type { B } from '../keys/b';",
      "export { c } from '../keys/c';",
      "export * from '../keys/d';",
      "import '../keys/e';",
      "const f = await import('../keys/f');",
      "const g = require('../keys/g');",
      'import {\n  h,\n  i,\n} from "../keys/h";',
    ].join('\n');

    expect(importSpecifiers(source).sort()).toEqual(
      ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((name) => `../keys/${name}`),
    );
  });
});
