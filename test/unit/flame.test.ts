import {
  callTree,
  categoryOf,
  categoryShares,
  renderFlameSvg,
  selfTimes,
  type CpuProfile,
} from '../../bench/flame';

const frame = (functionName: string, url = '/app/dist/x.js', lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
});

/**
 * root ─┬─ serve (dist) ─┬─ hash (node:)          two tree nodes for `hash`, merged
 *       │                └─ hash (node:)
 *       ├─ (idle)
 *       └─ writev (native)
 * Samples, one per millisecond from t = 1000: serve, hash, hash', idle, writev, hash.
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
    { id: 2, callFrame: frame('serve'), children: [3, 4] },
    { id: 3, callFrame: frame('hash', 'node:internal/crypto/hash', 220) },
    { id: 4, callFrame: frame('hash', 'node:internal/crypto/hash', 220) },
    { id: 5, callFrame: frame('(idle)', '') },
    { id: 6, callFrame: frame('writev', '') },
  ],
  samples: [2, 3, 4, 5, 6, 3],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000],
  startTime: 0,
  endTime: 6000,
};

describe('flame graph from a .cpuprofile', () => {
  test('idle samples are left out and same-function siblings are merged', () => {
    const { root, busy, idle } = callTree(profile);
    expect(busy).toBe(5);
    expect(idle).toBe(1);
    const serve = root.children.find((child) => child.name === 'serve');
    expect(serve).toMatchObject({ total: 4, self: 1, category: 'keyward' });
    expect(serve?.children).toHaveLength(1);
    expect(serve?.children[0]).toMatchObject({ name: 'hash', total: 3, self: 3, line: 221 });
  });

  test('a time window keeps only the samples taken inside it', () => {
    // Samples at 1000 … 6000 µs; 2500-5500 holds hash' (3000), idle (4000), writev (5000).
    const { root, busy, idle } = callTree(profile, { from: 2500, to: 5500 });
    expect(busy).toBe(2);
    expect(idle).toBe(1);
    expect(selfTimes(root).map((row) => [row.name, row.self])).toEqual([
      ['hash', 1],
      ['writev', 1],
    ]);
  });

  test('self time is summed per function and per origin', () => {
    const { root } = callTree(profile);
    expect(selfTimes(root).map((row) => [row.name, row.self])).toEqual([
      ['hash', 3],
      ['serve', 1],
      ['writev', 1],
    ]);
    expect(categoryShares(root)).toMatchObject({ keyward: 1, node: 3, native: 1 });
  });

  test('origins come from the script URL', () => {
    expect(categoryOf('file:///srv/keyward/dist/http/rpc.js', 'invoke')).toBe('keyward');
    expect(categoryOf('file:///srv/keyward/node_modules/ioredis/built/Command.js', 'C')).toBe(
      'ioredis',
    );
    expect(categoryOf('file:///srv/keyward/node_modules/pino/lib/proto.js', 'write')).toBe('pino');
    expect(categoryOf('node:_http_server', 'resOnFinish')).toBe('node');
    expect(categoryOf('', '(garbage collector)')).toBe('node');
    expect(categoryOf('', 'writev')).toBe('native');
  });

  test('the SVG draws each frame with a width in proportion to its samples', () => {
    const { root } = callTree(profile);
    const svg = renderFlameSvg(root, 'title', ['subtitle']);
    const width = (name: string) =>
      Number(new RegExp(`<title>${name}[^<]*</title><rect [^>]*width="([0-9.]+)"`).exec(svg)?.[1]);
    expect(width('serve')).toBeCloseTo((width('all busy samples') * 4) / 5, 1);
    expect(width('writev')).toBeCloseTo(width('all busy samples') / 5, 1);
    expect(svg).not.toContain('(idle)');
  });
});
