import { NO_API, normalTags } from '../../domain/usage';
import type { CountedVerification, UsageSink } from '../../observability/usage';
import type { ClickHouseSink } from './sink';

/**
 * What UsageRecorder hands on, as ClickHouse rows: a verification's verdict becomes a row of
 * key_verifications_v1, a standalone limit one of ratelimits_v1. The request id is the one the
 * operation passes ('' while it passes none); the identity's externalId is looked up when the
 * batch is formed, off the request path.
 */
export class ClickHouseUsageSink implements UsageSink {
  constructor(readonly sink: ClickHouseSink) {}

  verification(ws: string, at: number, v: CountedVerification): void {
    this.sink.verification({
      request_id: v.requestId ?? '',
      time: at,
      workspace_id: ws,
      key_space_id: v.apiId === undefined || v.apiId === NO_API ? '' : v.apiId,
      identity_id: v.identityId ?? '',
      external_id: '',
      key_id: v.keyId ?? '',
      outcome: v.code,
      tags: normalTags(v.tags),
      spent_credits: v.credits,
      // Always the property (undefined without KEYWARD_LOG_CLIENT_IP): one shape for every row.
      client_ip: v.clientIp,
    });
  }

  limit(
    ws: string,
    at: number,
    namespaceId: string,
    identifier: string,
    passed: boolean,
    requestId?: string,
  ): void {
    this.sink.limit({
      request_id: requestId ?? '',
      time: at,
      workspace_id: ws,
      namespace_id: namespaceId,
      identifier,
      passed: passed ? 1 : 0,
    });
  }

  start(): void {
    this.sink.start();
  }

  stop(deadlineMs: number): Promise<number> {
    return this.sink.stop(deadlineMs);
  }
}
