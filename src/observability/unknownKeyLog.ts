import type { Logger } from 'pino';

export interface UnknownKeyLogOptions {
  /** Length of a window: at most one line in full and one summary per window. */
  windowMs: number;
  /** Workspaces named in a summary; the rest are summed in `otherWorkspaces`. */
  maxWorkspaces: number;
}

export const UNKNOWN_KEY_LOG_DEFAULTS: UnknownKeyLogOptions = { windowMs: 1000, maxWorkspaces: 16 };

/**
 * How the access log treats verifications of keys that do not exist (docs/decisions.md, "Logging
 * a flood of unknown keys"). Whoever holds a list of made-up keys sets the rate of these
 * verifications, so a line each would let them fill the log's disk and spend the node's CPU on
 * writing it. Instead the first one of a window is logged in full (an ordinary access-log line,
 * so a caller who mistyped a key once sees no difference), the rest of that window are counted,
 * and one summary line says how many there were once the window closes. Every one of them is
 * still counted in `keyward_verifications_total{code="NOT_FOUND"}`. A key refused by its checksum
 * is an unknown key here too (its `mode` label is `checksum`).
 */
export class UnknownKeyLog {
  private windowOpen = false;
  private count = 0;
  private firstRequestId: string | undefined;
  private byWorkspace = new Map<string, number>();
  private otherWorkspaces = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly options: UnknownKeyLogOptions = UNKNOWN_KEY_LOG_DEFAULTS,
  ) {}

  /**
   * One unknown-key verification. True: the first of its window, to be logged in full by the
   * caller; false: counted into the window's summary instead.
   */
  admit(requestId: string, workspaceId: string | undefined): boolean {
    this.count++;
    this.countWorkspace(workspaceId ?? 'none');
    if (this.windowOpen) return false;
    this.windowOpen = true;
    this.firstRequestId = requestId;
    // unref: a window still open must not keep a stopping process alive; its summary is lost then
    // (at most one window's count; the metric has every one).
    this.timer = setTimeout(() => this.close(), this.options.windowMs).unref();
    return true;
  }

  /** Ends the current window now: its summary, if any verification was not logged in full. */
  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.windowOpen) return;
    const unlogged = this.count - 1;
    if (unlogged > 0) {
      const byWorkspace: Record<string, number> = {};
      for (const [workspaceId, count] of this.byWorkspace) byWorkspace[workspaceId] = count;
      this.logger.info(
        {
          operation: 'keys.verifyKey',
          code: 'NOT_FOUND',
          count: this.count,
          unlogged,
          windowMs: this.options.windowMs,
          firstRequestId: this.firstRequestId,
          byWorkspace,
          ...(this.otherWorkspaces > 0 ? { otherWorkspaces: this.otherWorkspaces } : {}),
        },
        'unknown keys verified',
      );
    }
    this.windowOpen = false;
    this.count = 0;
    this.firstRequestId = undefined;
    this.byWorkspace = new Map();
    this.otherWorkspaces = 0;
  }

  private countWorkspace(workspaceId: string): void {
    const seen = this.byWorkspace.get(workspaceId);
    if (seen !== undefined) this.byWorkspace.set(workspaceId, seen + 1);
    // Workspaces come from authenticated root keys, so they are few, but a line stays bounded.
    else if (this.byWorkspace.size < this.options.maxWorkspaces) {
      this.byWorkspace.set(workspaceId, 1);
    } else this.otherWorkspaces++;
  }
}
