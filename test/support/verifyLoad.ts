/**
 * Workers that verify one key without pause on every node of a topology, recording each answer:
 * the failover tests read from them what was admitted, refused unevaluated, or failed.
 */
export interface LoadAnswer {
  node: number;
  /** performance.now() when the request left, and when its answer came back. */
  sentAt: number;
  answeredAt: number;
  status: number;
  /** verifyKey's code, or the error envelope's, or the client's own failure. */
  code: string;
}

export interface VerifyLoad {
  answers: LoadAnswer[];
  stop(): Promise<LoadAnswer[]>;
}

/** Longer than any Redis deadline of a test node: an answer slower than this is a hang. */
export const HANG_MS = 5_000;

export function startVerifyLoad(
  urls: readonly string[],
  rootKey: string,
  body: Record<string, unknown>,
  workersPerNode = 2,
): VerifyLoad {
  const answers: LoadAnswer[] = [];
  let running = true;
  const worker = async (node: number, url: string) => {
    while (running) {
      const sentAt = performance.now();
      let status = 0;
      let code: string;
      try {
        const response = await fetch(`${url}/v1/keys.verifyKey`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(HANG_MS),
        });
        status = response.status;
        const answer = (await response.json()) as { code?: string; error?: { code?: string } };
        code = answer.code ?? answer.error?.code ?? 'NO_CODE';
      } catch (error) {
        code = error instanceof Error && error.name === 'TimeoutError' ? 'HANG' : 'CLIENT_ERROR';
      }
      answers.push({ node, sentAt, answeredAt: performance.now(), status, code });
    }
  };
  const workers = urls.flatMap((url, node) =>
    Array.from({ length: workersPerNode }, () => worker(node, url)),
  );
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(workers);
      return answers;
    },
  };
}
