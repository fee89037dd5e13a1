import { setFlagsFromString } from 'node:v8';
import vm from 'node:vm';
import { withCodeCache } from '../../support/jest-compile-cache';

const CACHE_OPTIONS = new Set(['produceCachedData', 'cachedData']);

/**
 * The real compileFunction behind the cache, with the caching options the cache passed to each call: to produce a
 * cache, or the cache to use (the names only, never the options: they hold the context).
 */
function recordedCompile(): { compile: typeof vm.compileFunction; calls: string[][] } {
  const calls: string[][] = [];
  const real = vm.compileFunction;
  return {
    compile: withCodeCache((code, params, options = {}) => {
      calls.push(Object.keys(options).filter((name) => CACHE_OPTIONS.has(name)));
      return real(code, params, options);
    }),
    calls,
  };
}

/** A compiled body of one parameter, called. */
const callWith = (compiled: unknown, argument: number): unknown =>
  (compiled as (a: number) => unknown)(argument);

describe('withCodeCache', () => {
  it("gives a second compile of the same source under the same name the first one's cache, which V8 takes", () => {
    const { compile, calls } = recordedCompile();

    const first = compile('return a + 1;', ['a'], { filename: '/modules/add.js' });
    const second = compile('return a + 1;', ['a'], { filename: '/modules/add.js' });

    expect(calls).toEqual([['produceCachedData'], ['cachedData']]);
    expect(second.cachedDataRejected).toBe(false);
    expect([callWith(first, 1), callWith(second, 1)]).toEqual([2, 2]);
  });

  it('compiles afresh a source that changed within the same length, and a source under another name', () => {
    const { compile, calls } = recordedCompile();
    compile('return a + 1;', ['a'], { filename: '/modules/add.js' });

    const changed = compile('return a + 2;', ['a'], { filename: '/modules/add.js' });
    const elsewhere = compile('return a + 1;', ['a'], { filename: '/modules/other.js' });

    expect(calls).toEqual([['produceCachedData'], ['produceCachedData'], ['produceCachedData']]);
    expect([callWith(changed, 1), callWith(elsewhere, 1)]).toEqual([3, 2]);
  });

  it('leaves uncached a compile without a file name', () => {
    const { compile, calls } = recordedCompile();

    compile('return 1;', [], {});
    compile('return 1;', [], {});

    expect(calls).toEqual([[], []]);
  });

  it('keeps no context alive once code compiled in it is cached', async () => {
    setFlagsFromString('--expose-gc');
    const collectGarbage = vm.runInNewContext('gc') as () => void;
    const { compile } = recordedCompile();
    const compiledIn = (): WeakRef<vm.Context> => {
      const context = vm.createContext({});
      compile('return 1;', [], { filename: '/modules/one.js', parsingContext: context });
      return new WeakRef(context);
    };

    const context = compiledIn();
    // A WeakRef holds its target until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();

    expect(context.deref()).toBeUndefined();
  });
});
