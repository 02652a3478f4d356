import { ConfigError, loadConfig } from '../../src/config';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('loadConfig', () => {
  test('KEYWARD_VAULT_KEYS: parsed at start; a malformed list is refused naming the variable, never the key', () => {
    const material = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ KEYWARD_VAULT_KEYS: `a:${material}` }).vaultKeys).toEqual([
      { id: 'a', key: Buffer.alloc(32, 7) },
    ]);
    expect(loadConfig({ KEYWARD_VAULT_KEYS: '' })).not.toHaveProperty('vaultKeys');
    const short = Buffer.alloc(31, 7).toString('base64');
    const error = configError({ KEYWARD_VAULT_KEYS: `a:${short}` });
    expect(error.message).toBe('KEYWARD_VAULT_KEYS: key "a" is not the base64 of exactly 32 bytes');
    expect(error.message).not.toContain(short);
  });

  test('has a default for everything', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '0.0.0.0',
      redisUrl: 'redis://127.0.0.1:6379',
      localRedisUrl: 'redis://127.0.0.1:6379',
      region: 'us-east-1',
      logLevel: 'info',
      logPretty: false,
      redisCommandTimeoutMs: 100,
      durability: { mode: 'local' },
      limiterFailure: 'closed',
      redisConnectTimeoutMs: 2000,
      cache: { maxEntries: 1_000_000, ttlMs: 300_000, negativeTtlMs: 5_000 },
      managementLimit: 1000,
      shutdownDrainMs: 0,
      errorDocsUrl: '/docs/errors',
      maxBodyBytes: 1024 * 1024,
      auditMaxEntries: 100_000,
      logClientIp: 'off',
      analytics: {
        enabled: true,
        countInRedis: true,
        flushMs: 1000,
        maxPending: 100_000,
        retention: { minute: 48 * 3_600_000, hour: 90 * 86_400_000, day: 730 * 86_400_000 },
      },
      webhooks: {
        allowPrivate: false,
        pollMs: 1000,
        timeoutMs: 10_000,
        retryBaseMs: 10_000,
        flushMs: 1000,
        cacheMs: 5000,
        expiringSweepMs: 600_000,
      },
    });
  });

  test('leases: off unless switched on; on, 5 s and a quarter of the limit unless set', () => {
    expect(loadConfig({}).leases).toBeUndefined();
    const region = { KEYWARD_LOCAL_REDIS_URL: 'redis://127.0.0.1:6380' };
    expect(loadConfig({ ...region, KEYWARD_CONSISTENT_LEASES: 'off' }).leases).toBeUndefined();
    expect(loadConfig({ ...region, KEYWARD_CONSISTENT_LEASES: 'on' }).leases).toEqual({
      ttlMs: 5000,
      maxShare: 0.25,
    });
    expect(
      loadConfig({
        ...region,
        KEYWARD_CONSISTENT_LEASES: 'on',
        KEYWARD_LEASE_TTL_MS: '2000',
        KEYWARD_LEASE_MAX_PERCENT: '10',
      }).leases,
    ).toEqual({ ttlMs: 2000, maxShare: 0.1 });
  });

  test('empty strings count as unset', () => {
    expect(
      loadConfig({
        KEYWARD_PORT: '',
        KEYWARD_HOST: '',
        KEYWARD_REDIS_URL: '',
        KEYWARD_LOCAL_REDIS_URL: '',
        KEYWARD_REGION: '',
        LOG_LEVEL: '',
        KEYWARD_CACHE_TTL_MS: '',
        KEYWARD_LIMITER_FAILURE: '',
      }),
    ).toEqual(loadConfig({}));
  });

  test('reads every variable', () => {
    const config = loadConfig({
      KEYWARD_PORT: '9000',
      KEYWARD_HOST: '127.0.0.1',
      KEYWARD_REDIS_URL: 'rediss://primary.example:6380/2',
      KEYWARD_LOCAL_REDIS_URL: 'redis://localhost:6381',
      KEYWARD_REGION: 'eu-west-1',
      LOG_LEVEL: 'debug',
      KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '250',
      KEYWARD_CONSISTENT_DURABILITY: 'replicated',
      KEYWARD_MIN_REPLICAS: '2',
      KEYWARD_REPLICA_WAIT_MS: '40',
      KEYWARD_LIMITER_FAILURE: 'open',
      KEYWARD_REDIS_CONNECT_TIMEOUT_MS: '500',
      KEYWARD_CACHE_MAX_ENTRIES: '10',
      KEYWARD_CACHE_TTL_MS: '60000',
      KEYWARD_CACHE_NEGATIVE_TTL_MS: '100',
      KEYWARD_ERROR_DOCS_URL: 'https://keyward.example/errors',
      KEYWARD_MANAGEMENT_RATE_LIMIT: '5',
      KEYWARD_AUDIT_MAX_ENTRIES: '50',
      KEYWARD_ANALYTICS: 'off',
      KEYWARD_ANALYTICS_REDIS_URL: 'redis://analytics:6379',
      KEYWARD_ANALYTICS_FLUSH_MS: '250',
      KEYWARD_ANALYTICS_MAX_PENDING: '500',
      KEYWARD_ANALYTICS_MINUTE_RETENTION_HOURS: '2',
      KEYWARD_ANALYTICS_HOUR_RETENTION_DAYS: '3',
      KEYWARD_ANALYTICS_DAY_RETENTION_DAYS: '4',
      KEYWARD_ANALYTICS_COUNT_IN_REDIS: 'off',
      KEYWARD_LOG_CLIENT_IP: 'x-forwarded-for',
      KEYWARD_WEBHOOK_ALLOW_PRIVATE: '1',
      KEYWARD_WEBHOOK_POLL_MS: '20',
      KEYWARD_WEBHOOK_TIMEOUT_MS: '2000',
      KEYWARD_WEBHOOK_RETRY_BASE_MS: '30000',
      KEYWARD_WEBHOOK_FLUSH_MS: '30',
      KEYWARD_WEBHOOK_CACHE_MS: '0',
      KEYWARD_WEBHOOK_EXPIRING_SWEEP_MS: '250',
    });
    expect(config).toEqual({
      port: 9000,
      host: '127.0.0.1',
      redisUrl: 'rediss://primary.example:6380/2',
      localRedisUrl: 'redis://localhost:6381',
      region: 'eu-west-1',
      logLevel: 'debug',
      logPretty: false,
      redisCommandTimeoutMs: 250,
      durability: { mode: 'replicated', minReplicas: 2, waitMs: 40 },
      limiterFailure: 'open',
      redisConnectTimeoutMs: 500,
      cache: { maxEntries: 10, ttlMs: 60_000, negativeTtlMs: 100 },
      managementLimit: 5,
      shutdownDrainMs: 0,
      errorDocsUrl: 'https://keyward.example/errors',
      maxBodyBytes: 1024 * 1024,
      auditMaxEntries: 50,
      logClientIp: 'x-forwarded-for',
      analytics: {
        enabled: false,
        countInRedis: false,
        redisUrl: 'redis://analytics:6379',
        flushMs: 250,
        maxPending: 500,
        retention: { minute: 2 * 3_600_000, hour: 3 * 86_400_000, day: 4 * 86_400_000 },
      },
      webhooks: {
        allowPrivate: true,
        pollMs: 20,
        timeoutMs: 2000,
        retryBaseMs: 30_000,
        flushMs: 30,
        cacheMs: 0,
        expiringSweepMs: 250,
      },
    });
  });

  test('replicated durability: half the command deadline to wait by default, and below it always', () => {
    expect(loadConfig({ KEYWARD_CONSISTENT_DURABILITY: 'replicated' }).durability).toEqual({
      mode: 'replicated',
      minReplicas: 1,
      waitMs: 50,
    });
    expect(() =>
      loadConfig({ KEYWARD_CONSISTENT_DURABILITY: 'replicated', KEYWARD_REPLICA_WAIT_MS: '100' }),
    ).toThrow(/KEYWARD_REPLICA_WAIT_MS: must be below KEYWARD_REDIS_COMMAND_TIMEOUT_MS \(100\)/);
    expect(() => loadConfig({ KEYWARD_CONSISTENT_DURABILITY: 'quorum' })).toThrow(
      /KEYWARD_CONSISTENT_DURABILITY: must be local or replicated/,
    );
    expect(() =>
      loadConfig({ KEYWARD_CONSISTENT_DURABILITY: 'replicated', KEYWARD_MIN_REPLICAS: '0' }),
    ).toThrow(/KEYWARD_MIN_REPLICAS/);
    // On a Redis Cluster too: WAIT goes to the master that took each write.
    expect(
      loadConfig({
        KEYWARD_CONSISTENT_DURABILITY: 'replicated',
        KEYWARD_REDIS_CLUSTER_NODES: '127.0.0.1:7000',
      }).durability.mode,
    ).toBe('replicated');
    // Without replicated durability the replica settings are not read.
    expect(loadConfig({ KEYWARD_REPLICA_WAIT_MS: '5000' }).durability).toEqual({ mode: 'local' });
  });

  test('the local Redis defaults to the primary', () => {
    const config = loadConfig({ KEYWARD_REDIS_URL: 'redis://primary:7000' });
    expect(config.redisUrl).toBe('redis://primary:7000');
    expect(config.localRedisUrl).toBe('redis://primary:7000');
  });

  test('a unix socket names a Redis by its absolute path', () => {
    const config = loadConfig({ KEYWARD_LOCAL_REDIS_URL: 'unix:///run/redis/local.sock' });
    expect(config.localRedisUrl).toBe('unix:///run/redis/local.sock');
    for (const wrong of [
      'unix://run/redis.sock',
      'unix:///',
      'unix:///run/redis/',
      'unix:/run/r.sock',
    ]) {
      expect(() => loadConfig({ KEYWARD_LOCAL_REDIS_URL: wrong })).toThrow(
        /^KEYWARD_LOCAL_REDIS_URL: must be/,
      );
    }
  });

  test('port 0 (any free port) and 65535 are allowed', () => {
    expect(loadConfig({ KEYWARD_PORT: '0' }).port).toBe(0);
    expect(loadConfig({ KEYWARD_PORT: '65535' }).port).toBe(65535);
  });

  test.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])(
    'accepts LOG_LEVEL=%s',
    (level) => {
      expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
    },
  );

  test.each<[string, Record<string, string>, RegExp]>([
    [
      'a port that is not a number',
      { KEYWARD_PORT: 'http' },
      /^KEYWARD_PORT: must be a whole number/,
    ],
    ['a negative port', { KEYWARD_PORT: '-1' }, /^KEYWARD_PORT: must be a whole number/],
    ['a fractional port', { KEYWARD_PORT: '80.5' }, /^KEYWARD_PORT: must be a whole number/],
    ['a port with spaces', { KEYWARD_PORT: ' 80' }, /^KEYWARD_PORT: must be a whole number/],
    ['a port in exponent form', { KEYWARD_PORT: '1e3' }, /^KEYWARD_PORT: must be a whole number/],
    [
      'a port above 65535',
      { KEYWARD_PORT: '65536' },
      /^KEYWARD_PORT: must be between 0 and 65535$/,
    ],
    [
      'a webhook allowance other than 0 or 1',
      { KEYWARD_WEBHOOK_ALLOW_PRIVATE: 'yes' },
      /^KEYWARD_WEBHOOK_ALLOW_PRIVATE: must be 0 or 1$/,
    ],
    [
      'a first webhook retry later than 30 s',
      { KEYWARD_WEBHOOK_RETRY_BASE_MS: '30001' },
      /^KEYWARD_WEBHOOK_RETRY_BASE_MS: must be between 10 and 30000$/,
    ],
    [
      'an http URL for the primary',
      { KEYWARD_REDIS_URL: 'http://127.0.0.1:6379' },
      /^KEYWARD_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL, or unix:\/\/\/absolute\/path\/to\/redis.sock$/,
    ],
    [
      'a bare host for the primary',
      { KEYWARD_REDIS_URL: '127.0.0.1:6379' },
      /^KEYWARD_REDIS_URL: /,
    ],
    [
      'a bad local URL',
      { KEYWARD_LOCAL_REDIS_URL: 'localhost' },
      /^KEYWARD_LOCAL_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL, or unix:\/\/\/absolute\/path\/to\/redis.sock$/,
    ],
    [
      'leases switched on with a word of their own',
      { KEYWARD_CONSISTENT_LEASES: 'yes' },
      /^KEYWARD_CONSISTENT_LEASES: must be on or off$/,
    ],
    [
      'leases without a Redis of the region to spend them on',
      { KEYWARD_CONSISTENT_LEASES: 'on' },
      /^KEYWARD_CONSISTENT_LEASES=on: needs KEYWARD_LOCAL_REDIS_URL/,
    ],
    [
      'leases longer than 10 s',
      {
        KEYWARD_CONSISTENT_LEASES: 'on',
        KEYWARD_LOCAL_REDIS_URL: 'redis://127.0.0.1:6380',
        KEYWARD_LEASE_TTL_MS: '10001',
      },
      /^KEYWARD_LEASE_TTL_MS: must be between 1000 and 10000$/,
    ],
    [
      'a lease of more than half the limit',
      {
        KEYWARD_CONSISTENT_LEASES: 'on',
        KEYWARD_LOCAL_REDIS_URL: 'redis://127.0.0.1:6380',
        KEYWARD_LEASE_MAX_PERCENT: '51',
      },
      /^KEYWARD_LEASE_MAX_PERCENT: must be between 1 and 50$/,
    ],
    [
      'an unknown limiter failure policy',
      { KEYWARD_LIMITER_FAILURE: 'fail-open' },
      /^KEYWARD_LIMITER_FAILURE: must be closed or open$/,
    ],
    ['an unknown log level', { LOG_LEVEL: 'verbose' }, /^LOG_LEVEL: must be one of fatal, error/],
    ['an upper-case log level', { LOG_LEVEL: 'INFO' }, /^LOG_LEVEL: /],
    [
      'a command timeout of 0',
      { KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '0' },
      /^KEYWARD_REDIS_COMMAND_TIMEOUT_MS: must be between 1 and 60000$/,
    ],
    [
      'a connect timeout above a minute',
      { KEYWARD_REDIS_CONNECT_TIMEOUT_MS: '60001' },
      /^KEYWARD_REDIS_CONNECT_TIMEOUT_MS: must be between 1 and 60000$/,
    ],
    ['a cache of 0 entries', { KEYWARD_CACHE_MAX_ENTRIES: '0' }, /^KEYWARD_CACHE_MAX_ENTRIES: /],
    ['a cache TTL above a day', { KEYWARD_CACHE_TTL_MS: '86400001' }, /^KEYWARD_CACHE_TTL_MS: /],
    [
      'a negative-cache TTL in seconds',
      { KEYWARD_CACHE_NEGATIVE_TTL_MS: '5s' },
      /^KEYWARD_CACHE_NEGATIVE_TTL_MS: must be a whole number, got "5s"$/,
    ],
    [
      'Sentinels without the master name',
      { KEYWARD_REDIS_SENTINELS: '127.0.0.1:26379' },
      /^KEYWARD_REDIS_SENTINELS and KEYWARD_REDIS_SENTINEL_MASTER: set both, or neither$/,
    ],
    [
      'a master name without Sentinels',
      { KEYWARD_REDIS_SENTINEL_MASTER: 'keyward' },
      /^KEYWARD_REDIS_SENTINELS and KEYWARD_REDIS_SENTINEL_MASTER: set both/,
    ],
    [
      'a Sentinel that is not host:port',
      { KEYWARD_REDIS_SENTINELS: '127.0.0.1', KEYWARD_REDIS_SENTINEL_MASTER: 'keyward' },
      /^KEYWARD_REDIS_SENTINELS: "127.0.0.1" is not host:port$/,
    ],
    [
      'Sentinels and a Redis Cluster together',
      {
        KEYWARD_REDIS_SENTINELS: '127.0.0.1:26379',
        KEYWARD_REDIS_SENTINEL_MASTER: 'keyward',
        KEYWARD_REDIS_CLUSTER_NODES: '127.0.0.1:7000',
      },
      /^KEYWARD_REDIS_SENTINELS: a Redis Cluster .* set one of the two$/,
    ],
  ])('refuses %s', (_, env, message) => {
    expect(configError(env).message).toMatch(message);
  });

  test('Sentinels and their master name, which take precedence over KEYWARD_REDIS_URL', () => {
    const config = loadConfig({
      KEYWARD_REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26380',
      KEYWARD_REDIS_SENTINEL_MASTER: 'keyward',
    });
    expect(config.redisSentinel).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
      ],
      name: 'keyward',
    });
    // Without a local Redis of its own, a node keeps fast buckets in the primary, as ever.
    expect(config.localRedisUrl).toBe(config.redisUrl);
  });

  test('reads process.env when given nothing', () => {
    const saved = process.env.KEYWARD_REGION;
    process.env.KEYWARD_REGION = 'ap-south-1';
    try {
      expect(loadConfig().region).toBe('ap-south-1');
    } finally {
      if (saved === undefined) delete process.env.KEYWARD_REGION;
      else process.env.KEYWARD_REGION = saved;
    }
  });
});

describe('KEYWARD_CLICKHOUSE_URL', () => {
  test('parsed into origin, user, database; the password never printed with the config', () => {
    const config = loadConfig({
      KEYWARD_CLICKHOUSE_URL: 'https://analytics:s%40cret@ch.internal:8443/keyward',
    });
    expect(config.clickhouse).toMatchObject({
      target: {
        origin: 'https://ch.internal:8443',
        user: 'analytics',
        database: 'keyward',
        display: 'https://analytics@ch.internal:8443/keyward',
      },
      batchRows: 10_000,
      flushMs: 1000,
      maxBufferedRows: 200_000,
      timeoutMs: 10_000,
      rawRetentionDays: 30,
    });
    expect(config.clickhouse?.target.password).toBe('s@cret');
    // Its rollups are what the readers read: counting in Redis too is only asked for.
    expect(config.analytics.countInRedis).toBe(false);
    expect(
      loadConfig({
        KEYWARD_CLICKHOUSE_URL: 'http://127.0.0.1:8123',
        KEYWARD_ANALYTICS_COUNT_IN_REDIS: 'on',
      }).analytics.countInRedis,
    ).toBe(true);
    expect(() => loadConfig({ KEYWARD_LOG_CLIENT_IP: 'on' })).toThrow(
      'KEYWARD_LOG_CLIENT_IP: must be one of off, peer, x-forwarded-for',
    );
    expect(() => loadConfig({ KEYWARD_ANALYTICS_COUNT_IN_REDIS: 'yes' })).toThrow(
      'KEYWARD_ANALYTICS_COUNT_IN_REDIS: must be on or off',
    );
    expect(JSON.stringify(config)).not.toContain('cret');
    expect(loadConfig({ KEYWARD_CLICKHOUSE_URL: '' })).not.toHaveProperty('clickhouse');
    expect(
      loadConfig({ KEYWARD_CLICKHOUSE_URL: 'http://127.0.0.1:8123' }).clickhouse?.target,
    ).toMatchObject({ user: 'default', database: 'default' });
  });

  test.each([
    ['not a url hunter2', 'must be http(s)://user:password@host:port/database'],
    ['redis://u:hunter2@h:1/db', 'must start with http:// or https://'],
    ['http://u:hunter2@h:1/db?x=1', 'takes no query string or fragment'],
    ['http://u:hunter2@h:1/db;DROP', 'the database (the path) must be a plain name'],
    ['http://u:hunter2@h:1/a/b', 'the database (the path) must be a plain name'],
  ])('%s is refused at start, without the password', (url, message) => {
    const error = configError({ KEYWARD_CLICKHOUSE_URL: url });
    expect(error.message).toContain(`KEYWARD_CLICKHOUSE_URL: ${message}`);
    expect(error.message).not.toContain('hunter2');
  });

  test('reads every KEYWARD_CLICKHOUSE_* variable', () => {
    expect(
      loadConfig({
        KEYWARD_CLICKHOUSE_URL: 'http://u:p@h:8123/db',
        KEYWARD_CLICKHOUSE_BATCH_ROWS: '500',
        KEYWARD_CLICKHOUSE_FLUSH_MS: '100',
        KEYWARD_CLICKHOUSE_MAX_BUFFERED_ROWS: '5000',
        KEYWARD_CLICKHOUSE_TIMEOUT_MS: '2000',
        KEYWARD_CLICKHOUSE_RAW_RETENTION_DAYS: '7',
      }).clickhouse,
    ).toMatchObject({
      batchRows: 500,
      flushMs: 100,
      maxBufferedRows: 5000,
      timeoutMs: 2000,
      rawRetentionDays: 7,
    });
    expect(
      configError({ KEYWARD_CLICKHOUSE_URL: 'http://h/db', KEYWARD_CLICKHOUSE_FLUSH_MS: '5000' })
        .message,
    ).toBe('KEYWARD_CLICKHOUSE_FLUSH_MS: must be between 10 and 1000');
  });

  test('the buffer holds at least one batch', () => {
    expect(
      configError({
        KEYWARD_CLICKHOUSE_URL: 'http://h:1/db',
        KEYWARD_CLICKHOUSE_BATCH_ROWS: '500',
        KEYWARD_CLICKHOUSE_MAX_BUFFERED_ROWS: '100',
      }).message,
    ).toBe(
      'KEYWARD_CLICKHOUSE_MAX_BUFFERED_ROWS: must be at least KEYWARD_CLICKHOUSE_BATCH_ROWS (500)',
    );
  });
  test('KEYWARD_CLICKHOUSE_READER_URL: the SQL analytics user, on the same database, with limits', () => {
    const config = loadConfig({
      KEYWARD_CLICKHOUSE_URL: 'http://u:p@h:8123/db',
      KEYWARD_CLICKHOUSE_READER_URL: 'http://reader:hunter2@h:8123/db',
      KEYWARD_CLICKHOUSE_QUERY_TIMEOUT_S: '5',
      KEYWARD_CLICKHOUSE_QUERY_MAX_RESULT_ROWS: '10',
    }).clickhouse;
    expect(config?.reader).toMatchObject({ user: 'reader', database: 'db' });
    expect(config?.query).toEqual({
      timeoutSeconds: 5,
      maxRowsToRead: 100_000_000,
      maxResultRows: 10,
      maxResultBytes: 16 * 1024 * 1024,
      maxMemoryBytes: 1_000_000_000,
    });
    expect(JSON.stringify(config)).not.toContain('hunter2');
    expect(loadConfig({ KEYWARD_CLICKHOUSE_URL: 'http://h:1/db' }).clickhouse).not.toHaveProperty(
      'reader',
    );
    expect(configError({ KEYWARD_CLICKHOUSE_READER_URL: 'http://r:p@h:1/db' }).message).toBe(
      'KEYWARD_CLICKHOUSE_READER_URL: needs KEYWARD_CLICKHOUSE_URL, whose rows it reads',
    );
    expect(
      configError({
        KEYWARD_CLICKHOUSE_URL: 'http://h:1/db',
        KEYWARD_CLICKHOUSE_READER_URL: 'http://r:hunter2@h:1/other',
      }).message,
    ).toBe('KEYWARD_CLICKHOUSE_READER_URL: must name the database of KEYWARD_CLICKHOUSE_URL (db)');
    expect(
      configError({
        KEYWARD_CLICKHOUSE_URL: 'http://h:1/db',
        KEYWARD_CLICKHOUSE_READER_URL: 'ftp://r:hunter2@h:1/db',
      }).message,
    ).toBe('KEYWARD_CLICKHOUSE_READER_URL: must start with http:// or https://');
  });
});
