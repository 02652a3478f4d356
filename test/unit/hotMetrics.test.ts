import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from '../../src/observability/hotMetrics';

/**
 * The hot-path metrics must scrape exactly as prom-client's own would: the same observations fed
 * to both, rendered by a prom-client registry each, give the same text.
 */
const BUCKETS = [0.001, 0.01, 0.1, 1];

test('a hot histogram renders as prom-client’s Histogram with the same observations', async () => {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({
    name: 'x_seconds',
    help: 'h',
    labelNames: ['role'],
    buckets: BUCKETS,
    registers: [theirs],
  });
  const hot = new HotHistogram('x_seconds', 'h', ['role'], BUCKETS, ours);
  const observations: [string, number][] = [
    ['local', 0.0005],
    ['local', 0.001], // on a bound: counted in that bucket (le)
    ['primary', 0.05],
    ['local', 3],
    ['primary', 0.1],
    ['local', 0.02],
  ];
  for (const [role, value] of observations) {
    reference.labels(role).observe(value);
    hot.handle(role).observe(value);
  }
  expect(await ours.metrics()).toBe(await theirs.metrics());
});

test('a hot counter renders as prom-client’s Counter, and reset empties it', async () => {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Counter({
    name: 'y_total',
    help: 'c',
    labelNames: ['code', 'mode'],
    registers: [theirs],
  });
  const hot = new HotCounter('y_total', 'c', ['code', 'mode'], ours);
  for (const [code, mode] of [
    ['VALID', 'fast'],
    ['VALID', 'fast'],
    ['RATE_LIMITED', 'consistent'],
  ] as const) {
    reference.labels(code, mode).inc();
    hot.handle(code, mode).value++;
  }
  expect(await ours.metrics()).toBe(await theirs.metrics());
  ours.resetMetrics();
  theirs.resetMetrics();
  expect(await ours.metrics()).toBe(await theirs.metrics());
});
