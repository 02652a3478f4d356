/** A client that speaks to a node the way an SDK does: plain HTTP and JSON. */
export interface RpcResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export type ErrorBody = {
  error: { code: string; message: string; docs: string; requestId: string };
};

export async function post<T = Record<string, unknown>>(
  baseUrl: string,
  operation: string,
  body: unknown,
  rootKey: string | undefined,
): Promise<RpcResponse<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (rootKey !== undefined) headers.authorization = `Bearer ${rootKey}`;
  const response = await fetch(`${baseUrl}/v1/${operation}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as T };
}

/** A GET's query parameters. */
export type Query = Record<string, string | number | boolean | readonly (string | number)[]>;

export async function get<T = Record<string, unknown>>(
  baseUrl: string,
  operation: string,
  query: Query,
  rootKey: string | undefined,
): Promise<RpcResponse<T>> {
  // An array is the parameter repeated (`groupBy=day&groupBy=key`), as v1's readers take lists.
  const params = new URLSearchParams(
    Object.entries(query).flatMap(([k, v]): [string, string][] =>
      Array.isArray(v) ? v.map((item) => [k, String(item)]) : [[k, String(v)]],
    ),
  );
  const headers: Record<string, string> = {};
  if (rootKey !== undefined) headers.authorization = `Bearer ${rootKey}`;
  const response = await fetch(`${baseUrl}/v1/${operation}?${params}`, { headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as T };
}

/** A client bound to one node and one root key. */
export function client(baseUrl: string, rootKey: string) {
  return {
    post: <T = Record<string, unknown>>(operation: string, body: unknown) =>
      post<T>(baseUrl, operation, body, rootKey),
    get: <T = Record<string, unknown>>(operation: string, query: Query) =>
      get<T>(baseUrl, operation, query, rootKey),
  };
}

/** A client bound to one node and one root key, as `client` makes it. */
export type Client = ReturnType<typeof client>;
