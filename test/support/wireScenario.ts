import { createHash } from 'node:crypto';
import { rawRequest } from './rawHttp';

/**
 * What the steps of the wire corpus (test/support/wireCorpus.ts) send requests with: the recorder
 * of raw exchanges, and the things earlier steps made for later ones. Nothing here is random: the
 * same code sends the same bytes on every run, except for what only the server knows (ids,
 * generated keys, timestamps), which the test normalizes.
 */

/** A request exactly as it goes on the wire (node adds Host, Connection and Content-Length). */
export interface CorpusRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Sent as these chunks with Transfer-Encoding: chunked instead of one body with a length. */
  chunks?: Buffer[];
}

export interface CorpusAnswer {
  status: number;
  /** `res.rawHeaders`: names as sent, duplicates kept. */
  rawHeaders: string[];
  body: Buffer;
}

export interface Exchange {
  label: string;
  request: CorpusRequest;
  answer: CorpusAnswer;
}

/** Well-formed ids that no server ever generated: kept literally by the normalization. */
export const FIXED_IDS: readonly string[] = [
  'api_1111111111111111111111',
  'key_1111111111111111111111',
  'rlns_1111111111111111111111',
];

export interface ScenarioContext {
  baseUrl: string;
  /** The topology's root key: `*` in a fresh workspace. */
  rootKey: string;
  newRootKey(options: {
    workspaceId?: string;
    permissions?: string[];
  }): Promise<{ key: string; workspaceId: string }>;
  workspaceId: string;
}

/** The root keys of the scenario by the name the fixture shows in place of the secret. */
export type RootKeyName = 'root' | 'narrow' | 'scoped' | 'other_ws';

const REQUEST_DEADLINE_MS = 15_000;

/**
 * One request on a fresh connection, answered with the exact status, raw header list and body
 * bytes. An upload the server cut short after answering (413) still yields the answer.
 */
export async function exchange(baseUrl: string, request: CorpusRequest): Promise<CorpusAnswer> {
  const { status, rawHeaders, bytes } = await rawRequest(baseUrl, {
    method: request.method,
    path: request.path,
    headers: {
      ...request.headers,
      ...(request.body !== undefined ? { 'content-length': Buffer.byteLength(request.body) } : {}),
    },
    ...(request.body !== undefined ? { body: request.body } : {}),
    ...(request.chunks ? { chunks: request.chunks } : {}),
    timeoutMs: REQUEST_DEADLINE_MS,
  });
  return { status, rawHeaders, body: bytes };
}

export interface Sent {
  status: number;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface SendOptions {
  auth?: RootKeyName | 'none' | { header: string };
  contentType?: string | null;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Recorder {
  readonly exchanges: Exchange[] = [];
  private readonly labels = new Set<string>();
  readonly rootKeys = new Map<RootKeyName, string>();

  constructor(private readonly baseUrl: string) {}

  private authorization(auth: SendOptions['auth']): Record<string, string> {
    if (auth === 'none') return {};
    if (typeof auth === 'object') return { authorization: auth.header };
    const key = this.rootKeys.get(auth ?? 'root');
    if (key === undefined) throw new Error(`scenario: root key ${auth} is not created yet`);
    return { authorization: `Bearer ${key}` };
  }

  async send(label: string, request: CorpusRequest): Promise<Sent> {
    if (this.labels.has(label)) throw new Error(`scenario: label "${label}" is used twice`);
    this.labels.add(label);
    // Ids lead with the millisecond of their creation and listings sort by id: two creations in
    // one millisecond would list in a random order. Sequential requests a few ms apart never do.
    await sleep(3);
    const answer = await exchange(this.baseUrl, request);
    this.exchanges.push({ label, request, answer });
    let json: unknown;
    try {
      json = JSON.parse(answer.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: answer.status, json };
  }

  post(label: string, operation: string, body: unknown, options: SendOptions = {}) {
    return this.postRaw(label, operation, JSON.stringify(body), options);
  }

  postRaw(
    label: string,
    operation: string,
    body: string | Buffer | undefined,
    options: SendOptions = {},
  ) {
    const contentType =
      options.contentType === undefined ? 'application/json' : options.contentType;
    return this.send(label, {
      method: 'POST',
      path: operation.startsWith('/') ? operation : `/v1/${operation}`,
      headers: {
        ...this.authorization(options.auth),
        ...(contentType === null ? {} : { 'content-type': contentType }),
      },
      ...(body === undefined ? {} : { body }),
    });
  }

  /** `query` is sent as written (already percent-encoded where needed). */
  get(label: string, operation: string, query: string, options: SendOptions = {}) {
    return this.send(label, {
      method: 'GET',
      path: `/v1/${operation}${query === '' ? '' : `?${query}`}`,
      headers: this.authorization(options.auth),
    });
  }

  method(label: string, method: string, path: string, options: SendOptions = {}) {
    return this.send(label, { method, path, headers: this.authorization(options.auth) });
  }
}

/** A string field of a JSON answer the scenario needs to go on; a clear failure otherwise. */
export function field(sent: Sent, name: string, label: string): string {
  const value =
    sent.json !== null && typeof sent.json === 'object'
      ? (sent.json as Record<string, unknown>)[name]
      : undefined;
  if (typeof value !== 'string') {
    throw new Error(`scenario: "${label}" answered ${sent.status} without ${name}`);
  }
  return value;
}

/** Creates through `post` and returns the field, failing when the creation did not succeed. */
export async function created(
  sent: Promise<Sent>,
  name: string,
  label: string,
): Promise<{ value: string; sent: Sent }> {
  const answer = await sent;
  if (answer.status !== 200) throw new Error(`scenario: "${label}" answered ${answer.status}`);
  return { value: field(answer, name, label), sent: answer };
}

export const HOUR = 3_600_000;
export const MiB = 1024 * 1024;
export const enc = encodeURIComponent;
export const sha256Base64 = (text: string) => createHash('sha256').update(text).digest('base64');
/** The limit most of ratelimits.limit's requests ask for. */
export const PER_HOUR = { limit: 2, duration: HOUR };

/** A key a step made: its id, and the plaintext the answer showed once. */
export interface MadeKey {
  keyId: string;
  key: string;
}

/** Creates a key through `post`, failing when the creation did not succeed. */
export async function createdKey(sent: Promise<Sent>, label: string): Promise<MadeKey> {
  const { value, sent: answer } = await created(sent, 'keyId', label);
  return { keyId: value, key: field(answer, 'key', label) };
}

/** What steps make for later ones, by the name the scenario gives it. */
export interface Made {
  apiA: string;
  apiB: string;
  k1: MadeKey;
  k2: MadeKey;
  k3: MadeKey;
  k4: MadeKey;
  k5: MadeKey;
  k6: MadeKey;
  /** When k6 expires: the step that verifies it waits until then. */
  k6Expires: number;
  k7: MadeKey;
  k8: MadeKey;
  /** A key of API B. */
  kB: MadeKey;
}

/** One run of the scenario: the recorder, and what its steps made so far. */
export class WireScene {
  readonly c: Recorder;
  private readonly made: Partial<Made> = {};

  constructor(readonly context: ScenarioContext) {
    this.c = new Recorder(context.baseUrl);
  }

  make<K extends keyof Made>(name: K, value: Made[K]): void {
    this.made[name] = value;
  }

  /** What an earlier step made; a step run before the one that makes it fails by name. */
  got<K extends keyof Made>(name: K): Made[K] {
    const value = this.made[name];
    if (value === undefined) throw new Error(`scenario: ${name} is not made yet`);
    return value as Made[K];
  }

  // Requests that steps of several operations send, to see what their own calls changed.
  verify(label: string, body: Record<string, unknown>, options: SendOptions = {}) {
    return this.c.post(`verifyKey: ${label}`, 'keys.verifyKey', body, options);
  }

  limit(label: string, body: Record<string, unknown>, options: SendOptions = {}) {
    return this.c.post(`limit: ${label}`, 'ratelimits.limit', body, options);
  }

  getOverride(label: string, query: string, options: SendOptions = {}) {
    return this.c.get(`getOverride: ${label}`, 'ratelimits.getOverride', query, options);
  }
}
