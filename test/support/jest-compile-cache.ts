/**
 * V8's code cache for the modules jest compiles, kept for the life of a worker. Jest compiles each module a test file
 * loads in that file's own vm context (vm.compileFunction, without a code cache): its own expect, jest-circus and
 * jest-snapshot, and the modules under test, parsed again for every file a worker runs. The first compile of a
 * source produces the cache; a later compile of the very same text under the same file name is given it. V8 checks
 * a cache against its own flags and compiles as before when it does not match, so a test sees the same functions
 * either way.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as NodeVm from 'node:vm';

type VmModule = typeof NodeVm;
type CompileFunction = VmModule['compileFunction'];

interface CachedCompile {
  /** The source's digest: V8's own check is of the source's length, and a watched file can change within it. */
  readonly digest: string;
  readonly data: Buffer;
}

const digestOf = (code: string): string => createHash('sha256').update(code).digest('base64');

// One cache per worker, however many projects load this runner in it.
const INSTALLED = Symbol.for('payment-api.jest-compile-cache');
const required = createRequire(__filename);
// The module object itself, whose compileFunction jest-runtime reads at each call (an import would give a copy).
const vm = required('node:vm') as VmModule & { [INSTALLED]?: true };

/** `compileFunction` with a code cache: each name's last source (by digest) and V8's cache of it. */
export function withCodeCache(compileFunction: CompileFunction): CompileFunction {
  const cache = new Map<string, CachedCompile>();
  return (code, params, options) => {
    const filename = options?.filename;
    if (filename === undefined) return compileFunction(code, params, options);
    const digest = digestOf(code);
    const cached = cache.get(filename);
    if (cached !== undefined && cached.digest === digest) {
      const compiled = compileFunction(code, params, { ...options, cachedData: cached.data });
      if (compiled.cachedDataRejected === true) cache.delete(filename);
      return compiled;
    }
    const compiled = compileFunction(code, params, { ...options, produceCachedData: true });
    // A copy made here: the Buffer Node hands back belongs to the context the code was compiled in, and keeping it
    // would keep that whole context (a finished test file's) alive.
    if (compiled.cachedData !== undefined)
      cache.set(filename, { digest, data: Buffer.from(compiled.cachedData) });
    return compiled;
  };
}

export function installCompileCache(): void {
  if (vm[INSTALLED]) return;
  vm[INSTALLED] = true;
  vm.compileFunction = withCodeCache(vm.compileFunction);
}
