import type { CommandSpec } from './framework';

const serve: CommandSpec = {
  path: ['serve'],
  brief: 'start a node',
  summary:
    'Starts a node: the HTTP API on KEYWARD_HOST:KEYWARD_PORT, configured by the KEYWARD_* variables. Logs are JSON lines on stdout (--json changes nothing). SIGTERM or SIGINT stops it after the requests in flight.',
  example: 'KEYWARD_REDIS_URL=redis://10.0.0.5:6379 KEYWARD_PORT=8080 keyward serve',
  async run(_invocation, runtime) {
    // Loaded here, not at the top: the other commands need neither Koa nor the HTTP stack.
    const { tuneHeapForKeyCache } = await import('../cache/heapTuning');
    tuneHeapForKeyCache();
    const { startNode } = await import('../node');
    const { createLogger, flushLog } = await import('../logger');
    const config = runtime.config;
    const logger = createLogger(config.logLevel, config.logPretty);
    const node = await startNode(config, logger);
    logger.info(
      {
        url: node.url,
        region: config.region,
        // The URL with its user alone: the password is never logged.
        ...(config.clickhouse ? { clickhouse: config.clickhouse.target.display } : {}),
      },
      'keyward node listening',
    );
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing requests in flight');
      node
        .close()
        .then(
          () => 0,
          (error: unknown) => {
            logger.error({ err: error }, 'unclean stop');
            return 1;
          },
        )
        .then(async (code) => {
          await flushLog(logger, LOG_FLUSH_ON_STOP_MS);
          process.exit(code);
        });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    return -1;
  },
};

/** How long a stopping node waits for its last log lines to be written. */
const LOG_FLUSH_ON_STOP_MS = 2000;

export const serveCommands: readonly CommandSpec[] = [serve];
