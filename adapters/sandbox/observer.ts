/**
 * The sandbox's observations for verified promotion (issue 20 item 4): after every change of a workflow of a service,
 * what the service's simulated GitOps status says — Synced and Healthy running which image (by digest), or not — goes
 * to the record store's intervals (`adapters/sql/images.ts`). The sandbox's status changes only through its
 * workflows, so following them sees every change.
 */
import type { Logger } from '../../core/logger.js';
import type { WorkflowEngine } from '../../core/ports.js';
import type { RecordStore } from '../sql/index.js';
import type { OperationEnv } from './plan.js';
import { runningImage } from './steps.js';

/** Follows `engine` until {@link SandboxObserver.close}. */
export class SandboxObserver {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly options: { engine: WorkflowEngine; store: RecordStore; env: OperationEnv; now: () => Date; log: Logger },
  ) {
    // One at a time, in the order of the changes: each reads the state as it is then, so the last one wins.
    options.engine.onChange((run) => {
      if (this.closed || !run.team || !run.service) return;
      const { team, service } = run;
      this.chain = this.chain
        .then(() => this.observe(team, service))
        .catch((err: unknown) => options.log.warn({ err, team, app: service }, 'sandbox: could not record what a service runs'));
    });
  }

  /** Record what `team`/`app` runs now (nothing when the tenant is gone). */
  async observe(team: string, app: string): Promise<void> {
    const { store, env, now } = this.options;
    const tenant = await store.tenants.get(team);
    if (!tenant) return;
    const service = await store.services.get(team, app);
    const healthy =
      service && !service.preview && service.imageTag !== '' && service.syncStatus === 'Synced' && service.healthStatus === 'Healthy';
    const running = healthy ? runningImage(env, service, service.imageTag) : undefined;
    await store.images.observe(
      { name: team, uid: tenant.uid },
      app,
      running && { image: running.image, digest: running.digest, repo: running.repo, dockerfilePath: running.dockerfilePath },
      now(),
    );
  }

  /** Stop following, after the observations already queued. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
  }
}
