/**
 * Named points between the steps of a write that spans slots (docs/redis.md, "Writes across
 * slots"). A store calls its hook at each; the node's hook does nothing unless
 * KEYWARD_FAULT_HALT_AT names the point, and then kills the process there, as a crash would:
 * that is how the tests show that every prefix of such a write is safe.
 */
export type StepHook = (point: string) => void;

export const noSteps: StepHook = () => undefined;

/** The hook of KEYWARD_FAULT_HALT_AT: SIGKILL at the named point, never a clean exit. */
export function haltAt(point: string | undefined): StepHook {
  if (!point) return noSteps;
  return (reached) => {
    if (reached === point) process.kill(process.pid, 'SIGKILL');
  };
}
