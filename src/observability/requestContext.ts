import { AsyncLocalStorage } from 'node:async_hooks';
import type { LifecycleStep } from '../http/lifecycle';

/**
 * The request a piece of work belongs to, for what records it without being handed it: the
 * ClickHouse rows carry each verification's request id, and UsageRecorder is called with the
 * verdict alone. Only a node that sends rows to ClickHouse installs the step (an
 * AsyncLocalStorage costs every promise a little); elsewhere `currentRequestId` answers ''.
 */
const requests = new AsyncLocalStorage<{ requestId: string }>();

/** A lifecycle step that makes the request's state the store of all that the request runs. */
export function requestContextStep(): LifecycleStep {
  return {
    enter(exchange) {
      // enterWith, not run: the step is synchronous and what follows it in the door's own
      // frame (the route) must see the store.
      requests.enterWith(exchange.state);
    },
  };
}

/** The id of the request this code runs for, or '' outside one (a command, a timer). */
export function currentRequestId(): string {
  return requests.getStore()?.requestId ?? '';
}
