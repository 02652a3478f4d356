import { address, nextNode } from '../../src/redis/clusterSubscriber';

/** Which cluster node the invalidation subscription goes to first, and where it moves next. */
const known = ['10.0.0.2:7001', '10.0.0.1:7000', '10.0.0.3:7002'];

test.each([
  [0, '10.0.0.1:7000'],
  [0.34, '10.0.0.2:7001'],
  [0.99, '10.0.0.3:7002'],
])('the first choice at %p of the sorted nodes is %s', (pick, node) => {
  expect(nextNode(known, [], undefined, pick)).toBe(node);
});

test('a move goes to the next node in order, and wraps around', () => {
  expect(nextNode(known, [], '10.0.0.1:7000', 0)).toBe('10.0.0.2:7001');
  expect(nextNode(known, [], '10.0.0.3:7002', 0)).toBe('10.0.0.1:7000');
});

test('every node is tried in turn, whatever the random pick', () => {
  let node = nextNode(known, [], undefined, 0.5);
  const visited = new Set([node]);
  for (let i = 0; i < known.length - 1; i++) {
    node = nextNode(known, [], node, Math.random());
    visited.add(node);
  }
  expect([...visited].sort()).toEqual([...known].sort());
});

test('a node the cluster forgot (a dead master) moves to the one after its place', () => {
  expect(nextNode(['10.0.0.1:7000', '10.0.0.3:7002'], [], '10.0.0.2:7001', 0)).toBe(
    '10.0.0.3:7002',
  );
});

test('seeds count as candidates, once, beside the known nodes', () => {
  expect(nextNode([], ['10.0.0.9:7009'], undefined, 0.7)).toBe('10.0.0.9:7009');
  expect(nextNode(['10.0.0.1:7000'], ['10.0.0.1:7000', '10.0.0.9:7009'], '10.0.0.1:7000', 0)).toBe(
    '10.0.0.9:7009',
  );
});

test('a lone node is chosen again; no node at all is an error', () => {
  expect(nextNode(['10.0.0.1:7000'], [], '10.0.0.1:7000', 0)).toBe('10.0.0.1:7000');
  expect(() => nextNode([], [], undefined, 0)).toThrow('no cluster node');
});

test('an address defaults as ioredis does', () => {
  expect(address({ host: '10.0.0.1', port: 7000 })).toBe('10.0.0.1:7000');
  expect(address({})).toBe('127.0.0.1:6379');
});
