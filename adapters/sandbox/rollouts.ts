/**
 * Promote and abort by hand in the sandbox (issue 22, `RolloutControl`): the command is left on the release's
 * workflow record, where its rollout step reads it within a second (`rollout-steps.ts`), in whichever pds process
 * runs the step.
 */
import { Conflict, NotFound } from '../../core/errors.js';
import type { RolloutControl } from '../../core/ports.js';
import type { RolloutView } from '../../core/rollouts.js';
import type { RecordStore } from '../sql/index.js';

/** The sandbox's promote and abort over the record store. */
export function sandboxRollouts({ store, now }: { store: RecordStore; now: () => Date }): RolloutControl {
  /** The release in progress (`release`'s, when given), or the refusal saying why there is none to act on. */
  async function inProgress(team: string, app: string, what: 'promote' | 'abort', release?: string): Promise<RolloutView> {
    const service = await store.services.get(team, app);
    if (!service) throw new NotFound(`service not found: ${team}/${app}`);
    const rollout = service.rollout;
    const running = rollout && (rollout.phase === 'Progressing' || rollout.phase === 'Paused') && service.activeWorkflow === rollout.workflowName;
    if (running && release !== undefined && rollout.workflowName !== release) {
      throw new Conflict(`the release of ${team}/${app} that was to be promoted (${release}) has ended; ${rollout.canaryTag} (${rollout.workflowName}) is in progress now`);
    }
    if (!running) {
      if (release !== undefined) {
        const last = rollout && rollout.workflowName === release ? `it is ${rollout.phase} on ${rollout.canaryTag}` : 'another release followed it';
        throw new Conflict(`the release of ${team}/${app} that was to be promoted (${release}) has ended: ${last}`);
      }
      throw new Conflict(
        `no canary or blue-green release of ${team}/${app} is in progress to ${what} (strategy ${service.strategy ?? 'rolling'}` +
          `${rollout ? `; the last release, ${rollout.canaryTag}, is ${rollout.phase}` : ''}); a release starts with deploy-service action=deploy`,
      );
    }
    return rollout;
  }
  async function command(team: string, app: string, userId: string, command: 'promote' | 'abort', release?: string): Promise<RolloutView> {
    const rollout = await inProgress(team, app, command, release);
    // The workflow settled between the read and the write: the release is over, as above.
    if (!(await store.workflows.command(rollout.workflowName, { command, userId, at: now().toISOString() }))) {
      throw new Conflict(`the release of ${team}/${app} (${rollout.workflowName}) has ended; nothing to ${command}`);
    }
    return rollout;
  }
  return {
    current: (team, app) => inProgress(team, app, 'promote'),
    promote: (team, app, userId, release) => command(team, app, userId, 'promote', release),
    abort: (team, app, userId) => command(team, app, userId, 'abort'),
  };
}
