import type { ParameterizedContext } from 'koa';
import type { LogFields } from '../operations/services';
import type { RootKeyRecord } from '../store/records';

/** What middleware learns about a request and hands on to handlers and the access log. */
export interface RequestState {
  requestId: string;
  rootKey?: RootKeyRecord;
  operation?: string;
  /** Ids worth logging with the request (never secrets). */
  logFields: LogFields;
}

export type KeywardContext = ParameterizedContext<RequestState>;
