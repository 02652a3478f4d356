import type { RefillConfig } from '../limiter/credits';
import { ratelimitOutput, type RatelimitOutput } from '../limiter/ratelimitConfig';
import type { ApiRecord, KeyRecord } from '../store/records';

/** A key as clients see it: never the hash, never the plaintext. */
export interface KeyView {
  id: string;
  start: string;
  workspaceId: string;
  apiId: string;
  name?: string;
  ownerId?: string;
  meta?: Record<string, unknown>;
  createdAt: number;
  updatedAt?: number;
  expires?: number;
  ratelimit?: RatelimitOutput;
  /** Usage credits left; absent for unlimited usage. */
  remaining?: number;
  refill?: RefillConfig & { lastRefillAt: number };
  enabled: boolean;
}

export function keyView(key: KeyRecord): KeyView {
  const view: KeyView = {
    id: key.id,
    start: key.start,
    workspaceId: key.workspaceId,
    apiId: key.apiId,
    createdAt: key.createdAt,
    enabled: key.enabled,
  };
  if (key.name !== undefined) view.name = key.name;
  if (key.ownerId !== undefined) view.ownerId = key.ownerId;
  if (key.meta !== undefined) view.meta = key.meta;
  if (key.updatedAt !== undefined) view.updatedAt = key.updatedAt;
  if (key.expires !== undefined) view.expires = key.expires;
  if (key.ratelimit !== undefined) view.ratelimit = ratelimitOutput(key.ratelimit);
  return view;
}

export interface ApiView {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
}

export function apiView(api: ApiRecord): ApiView {
  return { id: api.id, workspaceId: api.workspaceId, name: api.name, createdAt: api.createdAt };
}
