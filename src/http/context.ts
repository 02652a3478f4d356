import type { ParameterizedContext } from 'koa';
import type { RootKeyRecord } from '../domain/records';
import type { LogFields } from '../operations/operation';
import type { Answer, Exchange } from './lifecycle';

/** What the lifecycle learns about a request and hands on to the operation and the access log. */
export interface RequestState {
  requestId: string;
  rootKey?: RootKeyRecord;
  operation?: string | undefined;
  /** Ids worth logging with the request (never secrets). */
  logFields: LogFields;
}

/** Koa's per-request state: the lifecycle's exchange, and the answer of an RPC route. */
export interface KoaState {
  exchange: Exchange;
  answer?: Answer;
}

export type KeywardContext = ParameterizedContext<KoaState>;
