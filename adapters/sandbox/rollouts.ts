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
  async function command(team: string, app: string, userId: string, command: 'promote' | 'abort'): Promise<RolloutView> {
    const service = await store.services.get(team, app);
    if (!service) throw new NotFound(`service not found: ${team}/${app}`);
    const rollout = service.rollout;
    const inProgress = rollout && (rollout.phase === 'Progressing' || rollout.phase === 'Paused') && service.activeWorkflow === rollout.workflowName;
    if (!inProgress || !(await store.workflows.command(rollout.workflowName, { command, userId, at: now().toISOString() }))) {
      throw new Conflict(
        `no canary or blue-green release of ${team}/${app} is in progress to ${command} (strategy ${service.strategy ?? 'rolling'}` +
          `${rollout ? `; the last release, ${rollout.canaryTag}, is ${rollout.phase}` : ''}); a release starts with deploy-service action=deploy`,
      );
    }
    return rollout;
  }
  return {
    promote: (team, app, userId) => command(team, app, userId, 'promote'),
    abort: (team, app, userId) => command(team, app, userId, 'abort'),
  };
}
