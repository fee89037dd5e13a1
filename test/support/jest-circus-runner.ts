/**
 * jest-circus, as jest runs it by default, with a code cache for the modules jest compiles (jest-compile-cache.ts)
 * and one clean-up. Each test file loads its own copy of jest-circus, which makes an AsyncLocalStorage and never
 * disables it. On Node 20 an enabled one stays in async_hooks' list for the rest of the worker's life, and every
 * promise any later file makes walks that list: a worker's 60th file paid for 60 (about a sixth of the unit
 * project's time, in band). What a file made is disabled once the file ends. (From Node 22.7 a store lives in the
 * async context frame; there is no such list, and this changes nothing.)
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { installCompileCache } from './jest-compile-cache';

/** What jest calls for each test file (jest-runner's testFramework). */
type TestFramework = (...args: unknown[]) => Promise<unknown>;
type AsyncLocalStorageClass = typeof AsyncLocalStorage;

const required = createRequire(__filename);
// The module object itself, whose export jest-circus reads when it loads (an import would give a copy).
const exports = required('node:async_hooks') as { AsyncLocalStorage: AsyncLocalStorageClass };
// jest-circus publishes its runner without types, behind package exports.
const circus = (required('jest-circus/runner') as { default: TestFramework }).default;

installCompileCache();

const runDisablingStores: TestFramework = async (...args) => {
  const Original = exports.AsyncLocalStorage;
  const made: InstanceType<AsyncLocalStorageClass>[] = [];
  exports.AsyncLocalStorage = class<T> extends Original<T> {
    constructor() {
      super();
      made.push(this);
    }
  };
  try {
    return await circus(...args);
  } finally {
    exports.AsyncLocalStorage = Original;
    for (const store of made) store.disable();
  }
};

export default runDisablingStores;
