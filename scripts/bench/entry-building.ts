/**
 * The payment Lambda with its keyrings built as BENCH_ENTRY_BUILDING says (`eager` or `lazy`), whatever the
 * registry's size: what `npm run bench -- --only registry-cold` bundles to compare the two ways on the same
 * registries. Not deployed (lambda/payment/index.ts is: eager for one secret, lazy for several shards).
 */
import { composeLambdaHandler } from '../../lambda/payment/compose';

export const handler = composeLambdaHandler({
  entryBuilding: process.env.BENCH_ENTRY_BUILDING === 'lazy' ? 'lazy' : 'eager',
});
