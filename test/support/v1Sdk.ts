import { Unkey } from '@unkey/api';

/**
 * The published v1 SDK (`@unkey/api` 0.38) pointed at a node, as an Unkey user's code builds it,
 * with its own retries off: a test should see the first answer.
 */
export function v1Sdk(baseUrl: string, rootKey: string): Unkey {
  return new Unkey({ baseUrl, rootKey, retry: { attempts: 0, backoff: () => 0 } });
}

/** The result of an SDK call that must succeed; its error, when there is one, as a throw. */
export async function ok<R>(
  call: Promise<{ result?: R; error?: { code: string; message: string } }>,
): Promise<R> {
  const { result, error } = await call;
  if (error) throw new Error(`${error.code}: ${error.message}`);
  return result as R;
}
