export interface Namespace {
  id: string;
  name: string;
}

export interface Override {
  id: string;
  identifier: string;
  limit: number;
  duration: number;
  async?: boolean;
}

/** A namespace with all its overrides, as a node keeps it in memory. */
export interface NamespaceOverrides extends Namespace {
  overrides: Override[];
}
