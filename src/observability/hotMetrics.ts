import type { Metric, Registry } from 'prom-client';

/**
 * Counters and histograms for the verification path. prom-client validates and hashes the label
 * values on every `inc` and `observe`, even through a `labels()` child; these run several times
 * per request, and in a profile of fast verifications that was about 4 % of a node's CPU. Here a
 * label set resolves once to a series, and an update is an increment in it. The registry renders
 * them at scrape time like its own metrics (`get()` answers prom-client's shape).
 */
type Labels = Record<string, string>;

interface Series {
  labels: Labels;
}

/** Series by their label values, one level per label (the last level holds the series). */
type SeriesTree<S> = Map<string, SeriesTree<S> | S>;

abstract class HotMetric<S extends Series> {
  private readonly series: S[] = [];
  /**
   * A map per label rather than one keyed by the values joined: the join was most of an update's
   * cost, and updates run several times per verification.
   */
  private readonly tree: SeriesTree<S> = new Map();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    // Not a prom-client class, but what its registry reads of one: name, get(), reset().
    registry.registerMetric(this as unknown as Metric);
  }

  protected abstract newSeries(labels: Labels): S;

  /** The series of these label values (in `labelNames` order), made on first use. */
  protected seriesOf(values: readonly string[]): S {
    let level = this.tree;
    const last = this.labelNames.length - 1;
    for (let index = 0; index < last; index++) {
      const value = values[index] ?? '';
      let next = level.get(value) as SeriesTree<S> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const value = values[last] ?? '';
    let series = level.get(value) as S | undefined;
    if (series === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index] ?? ''));
      series = this.newSeries(labels);
      level.set(value, series);
      this.series.push(series);
    }
    return series;
  }

  protected all(): IterableIterator<S> {
    return this.series.values();
  }

  reset(): void {
    this.series.length = 0;
    this.tree.clear();
  }
}

interface CounterSeries extends Series {
  value: number;
}

export class HotCounter extends HotMetric<CounterSeries> {
  protected newSeries(labels: Labels): CounterSeries {
    return { labels, value: 0 };
  }

  /** The series of these label values: `handle(…).value++` counts one. */
  handle(...labelValues: string[]): CounterSeries {
    return this.seriesOf(labelValues);
  }

  get() {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: 'counter',
      aggregator: 'sum',
      values: [...this.all()].map(({ labels, value }) => ({ labels, value })),
    });
  }
}

export interface HistogramSeries extends Series {
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
  observe(value: number): void;
}

export class HotHistogram extends HotMetric<HistogramSeries> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  protected newSeries(labels: Labels): HistogramSeries {
    const bounds = this.buckets;
    const series: HistogramSeries = {
      labels,
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      observe(value: number) {
        let bucket = 0;
        while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket++;
        series.counts[bucket] = (series.counts[bucket] ?? 0) + 1;
        series.sum += value;
        series.count += 1;
      },
    };
    return series;
  }

  /** The series of these label values: `handle(…).observe(seconds)`. */
  handle(...labelValues: string[]): HistogramSeries {
    return this.seriesOf(labelValues);
  }

  get() {
    // The shape prom-client's own histogram gives: `le` first, then the series' labels.
    const values: {
      labels: Record<string, string | number>;
      sharedLabels: Labels;
      value: number;
      metricName: string;
    }[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.all()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += counts[index] ?? 0;
        values.push({
          labels: { le: bound },
          sharedLabels: labels,
          value: cumulative,
          metricName: bucket,
        });
      });
      values.push({
        labels: { le: '+Inf' },
        sharedLabels: labels,
        value: count,
        metricName: bucket,
      });
      values.push({ labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum` });
      values.push({
        labels: {},
        sharedLabels: labels,
        value: count,
        metricName: `${this.name}_count`,
      });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: 'histogram',
      aggregator: 'sum',
      values,
    });
  }
}
