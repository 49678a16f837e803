/**
 * Hold a sandbox workflow step open (the engine's `beforeStep`, `adapters/sandbox/engine.ts`), as the Argo stand-in's
 * `hold()` does for Workflows: a test cancels a workflow mid-run without sleeping, then releases the step, which finds
 * the workflow settled and never runs.
 */
export interface Held {
  /** Resolves with the workflow's name once a workflow of the prefix reaches the step. */
  reached: Promise<string>;
  /** Let the step go (and every later one). */
  release(): void;
}

export interface StepHolds {
  /** Pass to the sandbox as `beforeStep`. */
  beforeStep(workflow: string, step: number): Promise<void>;
  /** Hold the first workflow whose name starts with `prefix` before its step `step` (0-based). */
  hold(prefix: string, step: number): Held;
  /** Release every hold (for `afterAll`, so closing the engine never waits on one). */
  releaseAll(): void;
}

export function stepHolds(): StepHolds {
  const holds: Array<{ prefix: string; step: number; reach: (name: string) => void; released: Promise<void>; release: () => void; taken: boolean }> = [];
  return {
    async beforeStep(workflow, step) {
      const hold = holds.find((h) => !h.taken && workflow.startsWith(h.prefix) && h.step === step);
      if (!hold) return;
      hold.taken = true;
      hold.reach(workflow);
      await hold.released;
    },
    hold(prefix, step) {
      let reach!: (name: string) => void;
      let release!: () => void;
      const reached = new Promise<string>((resolve) => (reach = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ prefix, step, reach, released, release, taken: false });
      return { reached, release };
    },
    releaseAll() {
      for (const h of holds.splice(0)) h.release();
    },
  };
}
