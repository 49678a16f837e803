/**
 * Images in SQL (issue 20 item 4): {@link ImageObservations} — the intervals during which each service ran one image
 * Synced and Healthy — and the sandbox's registry of built images ({@link ImageStore.built}, {@link ImageStore.push}).
 * Both backends keep observations here; only the sandbox keeps its registry here (a cluster asks its registry).
 */
import type { Selectable } from 'kysely';
import type { HealthyInterval, ImageObservations, RunningImage, TenantRef } from '../../core/ports.js';
import { inTransaction, type Executor } from './executor.js';
import type { ImageObservationsTable } from './schema.js';

function intervalOf(row: Selectable<ImageObservationsTable>): HealthyInterval {
  return {
    image: row.image,
    digest: row.digest,
    since: row.since,
    ...(row.until !== null && { until: row.until }),
    ...(row.repo !== null && { repo: row.repo }),
    ...(row.dockerfile_path !== null && { dockerfilePath: row.dockerfile_path }),
  };
}

/** Most intervals read per service and image: enough history for any `minHealthy` (at most 30 days). */
const MAX_INTERVALS = 200;

/** Observations and the sandbox registry; bound to the database or to one transaction. */
export class ImageStore implements ImageObservations {
  constructor(private readonly db: Executor) {}

  async observe(tenant: TenantRef, app: string, running: RunningImage | undefined, at: Date): Promise<void> {
    // Two replicas that saw the same change race to open its interval; the loser's insert breaks the unique index of
    // open intervals, and its second look finds the winner's interval already open.
    await this.observeOnce(tenant, app, running, at).catch(() => this.observeOnce(tenant, app, running, at));
  }

  private async observeOnce(tenant: TenantRef, app: string, running: RunningImage | undefined, at: Date): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      const open = await tx
        .selectFrom('image_observations')
        .selectAll()
        .where('tenant_uid', '=', tenant.uid)
        .where('app', '=', app)
        .where('until', 'is', null)
        .executeTakeFirst();
      if (open && running && open.image === running.image && open.digest === running.digest) return;
      const now = at.toISOString();
      // An observation older than the open interval (a slow replica) must not end it before it began.
      if (open && now < open.since) return;
      if (open) await tx.updateTable('image_observations').set({ until: now }).where('seq', '=', open.seq).execute();
      if (!running) return;
      await tx
        .insertInto('image_observations')
        .values({
          tenant_uid: tenant.uid,
          team: tenant.name,
          app,
          image: running.image,
          digest: running.digest,
          repo: running.repo ?? null,
          dockerfile_path: running.dockerfilePath ?? null,
          since: now,
          until: null,
        })
        .execute();
    });
  }

  async intervals(tenant: TenantRef, app: string, image: string): Promise<HealthyInterval[]> {
    const rows = await this.db
      .selectFrom('image_observations')
      .selectAll()
      .where('tenant_uid', '=', tenant.uid)
      .where('app', '=', app)
      .where('image', '=', image)
      .orderBy('seq', 'desc')
      .limit(MAX_INTERVALS)
      .execute();
    return rows.map(intervalOf);
  }

  async current(tenant: TenantRef, app: string): Promise<HealthyInterval | undefined> {
    const row = await this.db
      .selectFrom('image_observations')
      .selectAll()
      .where('tenant_uid', '=', tenant.uid)
      .where('app', '=', app)
      .where('until', 'is', null)
      .executeTakeFirst();
    return row && intervalOf(row);
  }

  /** The sandbox registry: the digest of `image` (`<repository>:<tag>`) when it was built, else `undefined`. */
  async built(image: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('images').select('digest').where('image', '=', image).executeTakeFirst();
    return row?.digest;
  }

  /** The sandbox registry: record `image` pushed with `digest` by `workflow`; a second push of it changes nothing. */
  async push(image: string, digest: string, workflow: string, at: Date): Promise<void> {
    await this.db
      .insertInto('images')
      .values({ image, digest, workflow, built_at: at.toISOString() })
      .onConflict((oc) => oc.column('image').doNothing())
      .execute();
  }
}
