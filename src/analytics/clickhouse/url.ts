/**
 * Where a node sends its analytics rows: KEYWARD_CLICKHOUSE_URL, parsed once at start-up.
 * `http(s)://user:password@host:port/database`, ClickHouse's HTTP interface. The password is
 * kept apart from everything that is ever printed: `display` names the server without it.
 */
export interface ClickHouseTarget {
  /** `http(s)://host:port`, with no credentials and no path. */
  origin: string;
  user: string;
  password: string;
  database: string;
  /** `http://user@host:port/database`: for logs and error messages, never the password. */
  display: string;
}

export class ClickHouseUrlError extends Error {}

/** ClickHouse's own rule for a name written without quotes: the database goes into DDL. */
const DATABASE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * Parses `http(s)://user:password@host:port/database`. The messages quote nothing of the URL but
 * its scheme, host and database: a malformed URL may hold the password anywhere.
 */
export function parseClickHouseUrl(raw: string): ClickHouseTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ClickHouseUrlError('must be http(s)://user:password@host:port/database');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ClickHouseUrlError('must start with http:// or https://');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ClickHouseUrlError('takes no query string or fragment');
  }
  const path = url.pathname.replace(/^\//, '');
  const database = path === '' ? 'default' : decodeURIComponent(path);
  if (!DATABASE.test(database)) {
    throw new ClickHouseUrlError(
      `the database (the path) must be a plain name of letters, digits and _, got "${database.slice(0, 64)}"`,
    );
  }
  const user = url.username === '' ? 'default' : decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const origin = `${url.protocol}//${url.host}`;
  const target = {
    origin,
    user,
    database,
    display: `${url.protocol}//${encodeURIComponent(user)}@${url.host}/${database}`,
  } as ClickHouseTarget;
  // Not enumerable: a config logged or serialised whole still does not carry it.
  Object.defineProperty(target, 'password', { value: password, enumerable: false });
  return target;
}
