import type { Caller } from '../../../src/operations/operation';

export const WS = 'ws_test';
export const NOW = 1_700_000_000_000;

/** A caller holding `permissions`, with an empty access-log record to inspect afterwards. */
export function callerWith(permissions: string[]): Caller {
  return {
    rootKey: { id: 'root_1', workspaceId: WS, permissions, createdAt: 0 },
    requestId: 'req_test',
    logFields: {},
  };
}

/** Runs `run` and hands back what it threw, synchronously or as a rejection. */
export async function thrownBy(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw, got none');
}
