import type { Override } from '../domain/overrides';

/**
 * The override that applies to an identifier: an exact match beats any wildcard, and among
 * wildcards (`prefix*`) the longest prefix wins.
 */
export class OverrideMatcher {
  private readonly exact = new Map<string, Override>();
  /** Longest prefix first, so the first match is the best one. */
  private readonly wildcards: { prefix: string; override: Override }[] = [];

  constructor(overrides: readonly Override[]) {
    for (const override of overrides) {
      if (override.identifier.endsWith('*')) {
        this.wildcards.push({ prefix: override.identifier.slice(0, -1), override });
      } else this.exact.set(override.identifier, override);
    }
    this.wildcards.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  match(identifier: string): Override | undefined {
    const exact = this.exact.get(identifier);
    if (exact) return exact;
    for (const { prefix, override } of this.wildcards)
      if (identifier.startsWith(prefix)) return override;
    return undefined;
  }
}
