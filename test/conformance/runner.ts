import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTopology, type Topology } from '../support/topology';
import { PRESENT, type Answer, type Caller, type ConformanceCase, type Json } from './types';

/**
 * Plays conformance cases (test/conformance/types.ts) against one node: makes the fixtures a case
 * names, calls the route as the case's caller, and compares the answer with what Unkey asserts,
 * or with the documented deviation.
 */

type Dialect = 'v1' | 'v2';

interface Reply {
  status: number;
  body: { data?: Record<string, unknown>; error?: { type?: string; code?: string } } & Record<
    string,
    unknown
  >;
}

/** The section of docs/decisions.md every deviation must have its line in. */
const DEVIATIONS = (() => {
  const text = readFileSync(join(__dirname, '../../docs/decisions.md'), 'utf8');
  const start = text.indexOf('## Conformance corpus: deviations');
  if (start < 0) return '';
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
})();

/** A root key holding nothing: keyward's store refuses an empty list, so one that grants nothing. */
const NOTHING = 'unrelated.nothing.none';

export class ConformanceRunner {
  private serial = 0;
  private foreign: Promise<string> | undefined;
  /**
   * The workspace of the case being played, with a `*` root key for its fixtures: a fresh one per
   * case, so that no case sees what another left (a role one case's createKey made, a name taken).
   */
  private home: { key: string; workspaceId: string };

  constructor(private readonly topology: Topology) {
    this.home = { key: topology.rootKey, workspaceId: topology.workspaceId };
  }

  private get url(): string {
    return this.topology.nodes[0]!.url;
  }

  async call(
    dialect: Dialect,
    route: string,
    authorization: string | null,
    body: string | undefined,
    query?: Record<string, string>,
  ): Promise<Reply> {
    const headers: Record<string, string> = query ? {} : { 'content-type': 'application/json' };
    if (authorization !== null) headers.authorization = authorization;
    const search = query ? `?${new URLSearchParams(query).toString()}` : '';
    const response = await fetch(`${this.url}/${dialect}/${route}${search}`, {
      method: query ? 'GET' : 'POST',
      headers,
      ...(body === undefined || query ? {} : { body }),
    });
    const text = await response.text();
    let parsed: Reply['body'] = {};
    try {
      parsed = JSON.parse(text) as Reply['body'];
    } catch {
      parsed = { text };
    }
    return { status: response.status, body: parsed };
  }

  /** A v2 call with a `*` root key (the case's workspace's, or the other's) that must succeed. */
  private async must(
    route: string,
    body: Record<string, Json>,
    rootKey = this.home.key,
  ): Promise<Record<string, unknown>> {
    const reply = await this.call('v2', route, `Bearer ${rootKey}`, JSON.stringify(body));
    if (reply.status !== 200) {
      throw new Error(`fixture ${route} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    }
    return reply.body.data ?? {};
  }

  /** The root key of a second workspace, with `*`, made once. */
  private foreignRoot(): Promise<string> {
    this.foreign ??= this.topology.newRootKey().then((root) => root.key);
    return this.foreign;
  }

  private unique(prefix: string): string {
    this.serial += 1;
    return `${prefix}_${Date.now().toString(36)}_${this.serial}`;
  }

  /** A new role holding these permissions, each created first: its name. */
  private async roleHolding(permissions: readonly string[]): Promise<string> {
    for (const slug of permissions) {
      await this.must('permissions.createPermission', { name: slug, slug });
    }
    const name = this.unique('conf.role');
    await this.must('permissions.createRole', { name, permissions: [...permissions] });
    return name;
  }

  /** Makes the fixtures the case's text names, each once. */
  private async fixtures(
    text: string,
    setup: ConformanceCase['setup'],
  ): Promise<Map<string, string>> {
    const made = new Map<string, string>();
    const want = new Set([...text.matchAll(/\{([a-zA-Z]+)\}/g)].map((match) => match[1]!));
    const api = async (rootKey?: string) =>
      String((await this.must('apis.createApi', { name: this.unique('conf') }, rootKey)).apiId);
    const needApi = async () => {
      if (!made.has('api')) made.set('api', await api());
      return made.get('api')!;
    };
    const needNamespace = () => {
      if (!made.has('namespace')) made.set('namespace', this.unique('conf.ns'));
      return made.get('namespace')!;
    };
    for (const name of want) {
      switch (name) {
        case 'api':
          await needApi();
          break;
        case 'otherApi':
          made.set(name, await api());
          break;
        case 'deletedApi': {
          const apiId = await api();
          await this.must('apis.deleteApi', { apiId });
          made.set(name, apiId);
          break;
        }
        case 'foreignApi':
          made.set(name, await api(await this.foreignRoot()));
          break;
        case 'key':
        case 'keyString': {
          if (made.has('key')) break;
          const apiId = await needApi();
          const roles = setup?.keyRole ? [await this.roleHolding(setup.keyRole.permissions)] : [];
          const created = await this.must('keys.createKey', {
            apiId,
            ...(roles.length > 0 ? { roles } : {}),
            ...setup?.key,
          });
          if (setup?.keyUpdate) {
            await this.must('keys.updateKey', { keyId: String(created.keyId), ...setup.keyUpdate });
          }
          made.set('key', String(created.keyId));
          made.set('keyString', String(created.key));
          break;
        }
        case 'deletedKey':
        case 'deletedKeyString': {
          if (made.has('deletedKey')) break;
          const apiId = await needApi();
          const created = await this.must('keys.createKey', { apiId });
          await this.must('keys.deleteKey', { keyId: String(created.keyId) });
          made.set('deletedKey', String(created.keyId));
          made.set('deletedKeyString', String(created.key));
          break;
        }
        case 'foreignKey':
        case 'foreignKeyString': {
          if (made.has('foreignKey')) break;
          const root = await this.foreignRoot();
          const created = await this.must('keys.createKey', { apiId: await api(root) }, root);
          made.set('foreignKey', String(created.keyId));
          made.set('foreignKeyString', String(created.key));
          break;
        }
        case 'identity':
        case 'externalId': {
          if (made.has('identity')) break;
          const externalId = this.unique('conf_ext');
          const created = await this.must('identities.createIdentity', {
            externalId,
            ...setup?.identity,
          });
          made.set('identity', String(created.identityId));
          made.set('externalId', externalId);
          break;
        }
        case 'deletedExternalId': {
          const externalId = this.unique('conf_gone');
          await this.must('identities.createIdentity', { externalId });
          await this.must('identities.deleteIdentity', { identity: externalId });
          made.set(name, externalId);
          break;
        }
        case 'foreignExternalId': {
          const externalId = this.unique('conf_foreign');
          await this.must('identities.createIdentity', { externalId }, await this.foreignRoot());
          made.set(name, externalId);
          break;
        }
        case 'permission':
        case 'permissionSlug': {
          if (made.has('permission')) break;
          const slug = this.unique('conf.perm');
          const created = await this.must('permissions.createPermission', {
            name: slug,
            slug,
            ...setup?.permission,
          });
          made.set('permission', String(created.permissionId));
          made.set('permissionSlug', slug);
          break;
        }
        case 'role':
        case 'roleName': {
          if (made.has('role')) break;
          const roleName = this.unique('conf.role');
          const created = await this.must('permissions.createRole', {
            name: roleName,
            ...setup?.role,
          });
          made.set('role', String(created.roleId));
          made.set('roleName', roleName);
          break;
        }
        case 'namespace':
          await this.must('ratelimit.limit', {
            namespace: needNamespace(),
            identifier: 'conf',
            limit: 10,
            duration: 60_000,
          });
          break;
        case 'override':
        case 'overrideIdentifier': {
          if (made.has('override')) break;
          const namespace = needNamespace();
          const created = await this.must('ratelimit.setOverride', {
            namespace,
            identifier: 'conf_user',
            limit: 10,
            duration: 60_000,
          });
          made.set('override', String(created.overrideId));
          made.set('overrideIdentifier', 'conf_user');
          const read = await this.must('ratelimit.getOverride', {
            namespace,
            identifier: 'conf_user',
          });
          made.set('namespaceId', String(read.namespaceId));
          break;
        }
        default:
          throw new Error(`unknown fixture {${name}}`);
      }
    }
    return made;
  }

  private async authorization(caller: Caller, fill: (text: string) => string) {
    if ('header' in caller) return caller.header === null ? null : fill(caller.header);
    const foreign = 'otherWorkspace' in caller;
    const granted = (foreign ? caller.otherWorkspace : caller.permissions).map(fill);
    const root = await this.topology.newRootKey({
      ...(foreign ? {} : { workspaceId: this.home.workspaceId }),
      permissions: granted.length === 0 ? [NOTHING] : granted,
    });
    return `Bearer ${root.key}`;
  }

  /** Plays one case: keyward's answer, and the case's placeholders filled with its fixtures. */
  async play(
    dialect: Dialect,
    entry: ConformanceCase,
  ): Promise<Reply & { fill: (value: string) => string }> {
    const text = JSON.stringify([
      entry.body ?? null,
      entry.raw ?? null,
      entry.query ?? null,
      entry.caller,
      entry.expect.data ?? null,
    ]);
    this.home = await this.topology.newRootKey();
    const made = await this.fixtures(text, entry.setup);
    const fill = (value: string) =>
      value.replace(/\{([a-zA-Z]+)\}/g, (whole, name: string) => made.get(name) ?? whole);
    const body =
      entry.raw !== undefined
        ? entry.raw
        : entry.body === undefined
          ? undefined
          : fill(JSON.stringify(entry.body));
    const query = entry.query
      ? Object.fromEntries(Object.entries(entry.query).map(([name, value]) => [name, fill(value)]))
      : undefined;
    const authorization = await this.authorization(entry.caller, fill);
    return { ...(await this.call(dialect, entry.route, authorization, body, query)), fill };
  }
}

/** The part of an answer a case compares, so that a failure's diff shows only that. */
export function seen(reply: Reply, wanted: Answer): Answer {
  const got: Answer = { status: reply.status };
  if (wanted.type !== undefined) {
    const error = reply.body.error;
    got.type = (dialectType(error) ?? '') as string;
  }
  if (wanted.data !== undefined) {
    got.data = project((reply.body.data ?? reply.body) as Json, wanted.data);
  }
  return got;
}

/**
 * What of `actual` the case looks at: the fields `wanted` names, recursively (an absent one as
 * null); `PRESENT` where the actual value is there at all, so the case need not know it.
 */
function project(actual: Json | undefined, wanted: Json): Json {
  if (wanted === PRESENT) return actual === undefined || actual === null ? null : PRESENT;
  if (Array.isArray(wanted)) {
    return Array.isArray(actual)
      ? actual.map((item, i) => (i < wanted.length ? project(item, wanted[i]!) : item))
      : (actual ?? null);
  }
  if (wanted !== null && typeof wanted === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      return actual ?? null;
    }
    return Object.fromEntries(
      Object.entries(wanted).map(([field, value]) => [field, project(actual[field], value)]),
    );
  }
  return actual ?? null;
}

/** The case's expected answer with its placeholders filled. */
function filled(wanted: Answer, fill: (value: string) => string): Answer {
  return wanted.data === undefined
    ? wanted
    : { ...wanted, data: JSON.parse(fill(JSON.stringify(wanted.data))) as Json };
}

function dialectType(error: { type?: string; code?: string } | undefined): string | undefined {
  return error?.type ?? error?.code;
}

/** Registers one jest test per case of `cases`. */
/** One node for a conformance file's cases: started before them, stopped after. */
export function conformanceNode(): () => ConformanceRunner {
  let topology: Topology | undefined;
  let runner: ConformanceRunner | undefined;
  beforeAll(async () => {
    topology = await startTopology({ nodes: 1 });
    runner = new ConformanceRunner(topology);
  });
  afterAll(() => topology?.stop());
  return () => {
    if (!runner) throw new Error('the conformance node has not started');
    return runner;
  };
}

export function describeCorpus(
  dialect: Dialect,
  title: string,
  cases: readonly ConformanceCase[],
  runner: () => ConformanceRunner,
): void {
  describe(title, () => {
    for (const entry of cases) {
      const name = `${entry.route}: ${entry.from}`;
      if (entry.pending !== undefined) {
        test.skip(`${name} (pending: ${entry.pending})`, () => undefined);
        continue;
      }
      if (entry.deviation) {
        const { id, keyward } = entry.deviation;
        test(`${name} (deviation ${id})`, async () => {
          const reply = await runner().play(dialect, entry);
          const wanted = filled(keyward, reply.fill);
          expect(seen(reply, wanted)).toEqual(wanted);
          const line = `- \`${id}\`: \`${entry.route}\` · ${entry.from}\n`;
          expect({ line, documented: DEVIATIONS.includes(line) }).toEqual({
            line,
            documented: true,
          });
        });
        continue;
      }
      test(name, async () => {
        const reply = await runner().play(dialect, entry);
        const wanted = filled(entry.expect, reply.fill);
        expect(seen(reply, wanted)).toEqual(wanted);
      });
    }
  });
}
