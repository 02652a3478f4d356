import type { Operation } from '../operations/operation';
import { operations } from '../operations/registry';

/**
 * The route table: every operation at `/v1/{name}`, a GET (query) or a POST (JSON body) as it
 * declares. Both HTTP doors (src/http/app.ts, src/http/dataPlane.ts) serve it.
 */
export const routes: readonly Operation[] = operations;

export function pathOf(route: Pick<Operation, 'name'>): string {
  return `/v1/${route.name}`;
}
