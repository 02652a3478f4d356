#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config';
import { KeywardError } from './errors';
import { createLogger } from './logger';
import { startNode } from './node';
import { createRootKey } from './operations/rootKeys';
import { closeRedis, connectRedis, createPrimary } from './redis/clients';
import { RootKeyStore } from './store/rootKeyStore';

const USAGE = `usage: keyward <command>

commands:
  serve                                   start a node (configured by KEYWARD_* variables)
  root create [--name N] [--workspace ws_…] [--permissions p1,p2]
                                          create a root key; prints {"workspaceId","keyId","key"}
                                          (a new workspace unless one is named; "*" by default)
`;

async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const node = await startNode(config, logger);
  logger.info({ url: node.url, region: config.region }, 'keyward node listening');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing requests in flight');
    node.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'unclean stop');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function rootCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      workspace: { type: 'string' },
      permissions: { type: 'string' },
    },
    strict: true,
  });
  const config = loadConfig();
  const redis = createPrimary(config);
  try {
    await connectRedis(redis);
    const created = await createRootKey(new RootKeyStore(redis), {
      ...(values.workspace !== undefined ? { workspaceId: values.workspace } : {}),
      ...(values.name !== undefined ? { name: values.name } : {}),
      permissions: (values.permissions ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    });
    process.stdout.write(`${JSON.stringify(created)}\n`);
  } finally {
    await closeRedis(redis);
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === 'serve') {
    await serve();
    return -1;
  }
  if (command === 'root' && sub === 'create') {
    await rootCreate(rest);
    return 0;
  }
  if (command === undefined || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  process.stderr.write(USAGE);
  return 2;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (error: unknown) => {
      const message =
        error instanceof KeywardError || error instanceof ConfigError || error instanceof TypeError
          ? error.message
          : String(error instanceof Error ? error.message : error);
      process.stderr.write(`keyward: ${message}\n`);
      process.exitCode = 1;
    },
  );
}
