/**
 * A flame graph (SVG) and a self-time table from a V8 `.cpuprofile` (`node --cpu-prof`). Idle
 * samples are left out: the widths are shares of the time the process was busy.
 */

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  /** Microseconds between samples, the first from startTime. */
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** A span of the profile's clock (µs, the same monotonic clock as `process.hrtime`). */
export interface TimeWindow {
  from: number;
  to: number;
}

export type Category = 'keyward' | 'node' | 'ioredis' | 'pino' | 'other module' | 'native';

/** One frame of the merged call tree: same function under the same path of callers. */
export interface Frame {
  name: string;
  file: string;
  line: number;
  category: Category;
  /** Busy samples in this frame and everything it called. */
  total: number;
  /** Busy samples in this frame itself. */
  self: number;
  children: Frame[];
}

const IDLE = '(idle)';

export function categoryOf(url: string, functionName: string): Category {
  if (url === '') return functionName === '(garbage collector)' ? 'node' : 'native';
  if (url.startsWith('node:')) return 'node';
  if (url.includes('/node_modules/ioredis/') || url.includes('/node_modules/redis-parser/')) {
    return 'ioredis';
  }
  if (url.includes('/node_modules/pino') || url.includes('/node_modules/@pinojs/')) return 'pino';
  if (url.includes('/node_modules/')) return 'other module';
  if (url.includes('/dist/')) return 'keyward';
  return 'other module';
}

function shortFile(url: string): string {
  if (url === '') return '';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) return url.slice(modules + '/node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist !== -1) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

/**
 * The call tree of the busy samples (only those taken inside `window`, when given), siblings with
 * the same function merged.
 */
export function callTree(
  profile: CpuProfile,
  window?: TimeWindow,
): { root: Frame; busy: number; idle: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const hits = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.from || at > window.to)) return;
    hits.set(id, (hits.get(id) ?? 0) + 1);
  });
  let idle = 0;
  const build = (node: CpuProfileNode): Frame | undefined => {
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === IDLE) {
      idle += hits.get(node.id) ?? 0;
      return undefined;
    }
    const frame: Frame = {
      name: functionName || '(anonymous)',
      file: shortFile(url),
      line: lineNumber + 1,
      category: categoryOf(url, functionName),
      total: 0,
      self: hits.get(node.id) ?? 0,
      children: [],
    };
    const merged = new Map<string, Frame>();
    for (const childId of node.children ?? []) {
      const childNode = byId.get(childId);
      const child = childNode && build(childNode);
      if (!child) continue;
      const key = `${child.name} ${child.file}:${child.line}`;
      const same = merged.get(key);
      if (same) mergeInto(same, child);
      else merged.set(key, child);
    }
    frame.children = [...merged.values()].sort((a, b) => a.name.localeCompare(b.name));
    frame.total = frame.self + frame.children.reduce((sum, child) => sum + child.total, 0);
    return frame;
  };
  const first = profile.nodes[0];
  const root = first && build(first);
  if (!root || root.total === 0) throw new Error('no busy samples in the profile (or its window)');
  root.name = 'all busy samples';
  return { root, busy: root.total, idle };
}

function mergeInto(into: Frame, from: Frame): void {
  into.self += from.self;
  into.total += from.total;
  for (const child of from.children) {
    const same = into.children.find(
      (c) => c.name === child.name && c.file === child.file && c.line === child.line,
    );
    if (same) mergeInto(same, child);
    else into.children.push(child);
  }
  into.children.sort((a, b) => a.name.localeCompare(b.name));
}

export interface SelfRow {
  name: string;
  file: string;
  line: number;
  category: Category;
  self: number;
}

/** Self samples per function (wherever it was called from), largest first. */
export function selfTimes(root: Frame): SelfRow[] {
  const rows = new Map<string, SelfRow>();
  const visit = (frame: Frame) => {
    if (frame.self > 0 && frame !== root) {
      const key = `${frame.name} ${frame.file}:${frame.line}`;
      const row = rows.get(key) ?? { ...frame, self: 0 };
      row.self += frame.self;
      rows.set(key, row);
    }
    for (const child of frame.children) visit(child);
  };
  visit(root);
  return [...rows.values()].sort((a, b) => b.self - a.self);
}

/** Busy samples with a frame matching `match` on their stack (each sample counted once). */
export function inclusive(root: Frame, match: (frame: Frame) => boolean): number {
  const visit = (frame: Frame): number =>
    match(frame) ? frame.total : frame.children.reduce((sum, child) => sum + visit(child), 0);
  return visit(root);
}

/** Self samples per category. */
export function categoryShares(root: Frame): Record<Category, number> {
  const shares: Record<Category, number> = {
    keyward: 0,
    node: 0,
    ioredis: 0,
    pino: 0,
    'other module': 0,
    native: 0,
  };
  const visit = (frame: Frame) => {
    if (frame !== root) shares[frame.category] += frame.self;
    for (const child of frame.children) visit(child);
  };
  visit(root);
  return shares;
}

const LEGEND: Record<Category, string> = {
  keyward: 'keyward (dist/)',
  node: 'Node.js, V8, GC',
  ioredis: 'ioredis',
  pino: 'pino',
  'other module': 'other modules',
  native: 'native / kernel',
};

export const CATEGORY_COLOURS: Record<Category, string> = {
  keyward: '#4e79a7',
  node: '#8cd17d',
  ioredis: '#f28e2b',
  pino: '#b07aa1',
  'other module': '#bab0ac',
  native: '#e15759',
};

const ROOT_COLOUR = '#dddddd';
/** Narrower frames are not drawn (their time stays in their caller's width). */
const MIN_FRAME_PX = 1.5;

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * Classic flame graph: callers below, callees on top, width = share of busy samples, siblings in
 * alphabetical order. Frames narrower than MIN_FRAME_PX are left out (their time stays in their
 * caller's width); each frame's tooltip gives its total and self share.
 */
export function renderFlameSvg(root: Frame, title: string, subtitle: string[]): string {
  const width = 1200;
  const rowHeight = 17;
  const top = 34 + 16 * subtitle.length;
  const side = 10;
  const usable = width - 2 * side;
  const scale = usable / Math.max(1, root.total);
  let depth = 0;
  const boxes: string[] = [];
  const place = (frame: Frame, x: number, level: number) => {
    const w = frame.total * scale;
    if (w < MIN_FRAME_PX) return;
    depth = Math.max(depth, level);
    boxes.push(box(frame, x, level, w));
    let childX = x;
    for (const child of frame.children) {
      place(child, childX, level + 1);
      childX += child.total * scale;
    }
  };
  const box = (frame: Frame, x: number, level: number, w: number) => {
    const share = (n: number) => `${((100 * n) / Math.max(1, root.total)).toFixed(2)} %`;
    const where = frame.file ? ` ${frame.file}:${frame.line}` : '';
    const tip = `${frame.name}${where}: ${share(frame.total)} total, ${share(frame.self)} self`;
    const chars = Math.floor((w - 4) / 6.6);
    const label = frame.name.length <= chars ? frame.name : `${frame.name.slice(0, chars - 1)}…`;
    // y is filled in once the depth is known (callers at the bottom).
    return (
      `<g><title>${escapeXml(tip)}</title>` +
      `<rect x="${x.toFixed(2)}" y="{Y${level}}" width="${w.toFixed(2)}" height="${rowHeight - 1}" ` +
      `fill="${frame === root ? ROOT_COLOUR : CATEGORY_COLOURS[frame.category]}" rx="1"/>` +
      (chars >= 3
        ? `<text x="${(x + 3).toFixed(2)}" y="{T${level}}">${escapeXml(label)}</text>`
        : '') +
      '</g>'
    );
  };
  place(root, side, 0);
  const height = top + (depth + 1) * rowHeight + 40;
  const yOf = (level: number) => top + (depth - level) * rowHeight;
  const body = boxes
    .join('\n')
    .replace(/\{Y(\d+)\}/g, (_, level: string) => String(yOf(Number(level))))
    .replace(/\{T(\d+)\}/g, (_, level: string) => String(yOf(Number(level)) + 12));
  const legend = (Object.keys(CATEGORY_COLOURS) as Category[])
    .map(
      (category, i) =>
        `<rect x="${side + i * 150}" y="${height - 26}" width="12" height="12" fill="${CATEGORY_COLOURS[category]}"/>` +
        `<text x="${side + i * 150 + 17}" y="${height - 16}">${LEGEND[category]}</text>`,
    )
    .join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${side}" y="22" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    ...subtitle.map(
      (text, i) => `<text x="${side}" y="${42 + 16 * i}" font-size="12">${escapeXml(text)}</text>`,
    ),
    body,
    legend,
    '</svg>',
    '',
  ].join('\n');
}
