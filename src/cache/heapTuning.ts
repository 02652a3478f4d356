import { setFlagsFromString } from 'node:v8';

/**
 * Process-wide V8 tuning for a node that holds up to a million cached keys. Call once, early, in
 * the process that serves (`keyward serve`); the memory benchmark calls it too.
 *
 * Allocation-site pretenuring: when most objects from one allocation site survive (as cached key
 * records do while the cache fills), V8 starts allocating that site's objects straight into the
 * old generation, and the ones that die young (the records a load parses and drops) then
 * fragment it instead of dying cheaply in the young one. Measured with a million cached keys:
 * 560 MiB RSS with it, 475-483 MiB without, and no loss of verification throughput
 * (docs/performance.md).
 *
 * Node documents changing V8 flags after start-up as unpredictable in general. This one is read
 * when the collector decides whether to pretenure an allocation site, so it is set before the
 * node serves anything; every `keyward serve` runs with it (the nodes tests start as processes,
 * the benchmark's nodes). It cannot come through NODE_OPTIONS, which takes only a few V8 flags.
 */
export function tuneHeapForKeyCache(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
