/*
 * keyward dashboard: charts, drawn by uPlot (uplot.js, which this node serves from its npm
 * package). uPlot draws on a canvas and styles its own elements through the CSSOM, which the
 * page's `style-src 'self'` allows; its legend's labels are set as text.
 */
import uPlot from './uplot.js';
import { h } from './core.js';

const DAY = 86_400_000;

/** A slot's start as the legend shows it: a day's in UTC (the buckets' days), an hour's local. */
function slotText(ms, slot) {
  const date = new Date(ms);
  if (slot < DAY) return date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
  return date.toLocaleDateString([], { dateStyle: 'medium', timeZone: 'UTC' });
}

/**
 * Counts over time as bars, one a slot, stacked by series (the first at the bottom): `times` are
 * the slots' starts (ms, `slot` apart) and each of `series` is `{ label, color, values }`, a
 * count per slot. The legend shows each series' total over the range (`range` names it), and
 * under the cursor its count in that slot. The chart takes its holder's width, and follows it.
 */
export function stackedBars({ times, series, slot, label, range }) {
  const holder = h('div.chart', { role: 'img', 'aria-label': label });
  const totals = series.map(({ values }) => values.reduce((sum, n) => sum + n, 0));
  // uPlot does not stack: each series is drawn as the sum of those below it and itself, from
  // the top of the one below (a band), and its legend answers its own count.
  let below = times.map(() => 0);
  const stacked = series.map(({ values }) => (below = values.map((n, i) => below[i] + n)));
  const half = slot / 2;
  const options = {
    width: 0,
    height: 280,
    ms: 1,
    tzDate: slot < DAY ? (ms) => new Date(ms) : (ms) => uPlot.tzDate(new Date(ms), 'UTC'),
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    scales: {
      x: { time: true, range: () => [times[0] - half, times[times.length - 1] + half] },
      y: { range: (u, min, max) => [0, uPlot.rangeNum(0, Math.max(max, 4), 0.1, true)[1]] },
    },
    axes: [
      { space: slot < DAY ? 60 : 50 },
      {
        // Counts are whole: no tick between two integers.
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7],
        values: (u, ticks) => ticks.map((tick) => tick.toLocaleString()),
        size: 60,
      },
    ],
    series: [
      {
        label: 'Time',
        value: (u, ms, si, index) => (index === null ? range : slotText(ms, slot)),
      },
      ...series.map((one, i) => ({
        label: one.label,
        fill: one.color,
        stroke: one.color,
        width: 0,
        points: { show: false },
        paths: uPlot.paths.bars({ size: [0.8, 48], align: 0 }),
        value: (u, sum, si, index) =>
          (index === null ? totals[i] : one.values[index]).toLocaleString(),
      })),
    ],
    bands: series.slice(1).map((_, i) => ({ series: [i + 2, i + 1] })),
  };
  let chart = null;
  const observer = new ResizeObserver(() => {
    if (!holder.isConnected) {
      observer.disconnect();
      chart?.destroy();
      return;
    }
    const width = holder.clientWidth;
    if (width === 0) return;
    if (chart === null) chart = new uPlot({ ...options, width }, [times, ...stacked], holder);
    else chart.setSize({ width, height: options.height });
  });
  observer.observe(holder);
  return holder;
}
