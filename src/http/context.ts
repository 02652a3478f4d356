import type { RootKeyRecord } from '../domain/records';
import type { LogFields } from '../operations/operation';

/** What the lifecycle learns about a request and hands on to the operation and the access log. */
export interface RequestState {
  requestId: string;
  rootKey?: RootKeyRecord;
  operation?: string | undefined;
  /** Ids worth logging with the request (never secrets). */
  logFields: LogFields;
  /** The client's address, only when KEYWARD_LOG_CLIENT_IP asks for it (src/http/clientAddress.ts). */
  clientIp?: string | undefined;
}
