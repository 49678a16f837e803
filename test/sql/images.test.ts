/**
 * Image observations and the sandbox registry in the record store (issue 20 item 4), on SQLite and PostgreSQL: one
 * open interval per service, any other state (another digest, unhealthy, gone) ends it so a gap restarts the clock,
 * the same report twice changes nothing, and replicas racing to open one interval leave one. Also the names images
 * get from their source (`core/images.ts`).
 */
import { describe, expect, it } from 'vitest';
import { pushSecretName, simulatedDigest, sourceImage, splitImage } from '../../core/images.js';
import { ENGINES, freshStore } from './helpers.js';

const staging = { name: 'acme-staging', uid: '00000000-0000-4000-8000-0000000000a1' };
const image = 'registry.test/pds/src/acme/web:0.2.0';
const v2 = { image, digest: simulatedDigest(image), repo: 'acme/web' };
const other = { image: 'registry.test/pds/src/acme/web:0.3.0', digest: simulatedDigest('0.3.0') };
const at = (minute: number) => new Date(Date.UTC(2026, 10, 26, 8, minute));

describe.each(ENGINES)('image observations on %s', (engine) => {
  it('open an interval when healthy, keep it through repeats, end it on any change; a gap starts a new one', async () => {
    const store = await freshStore(engine);
    await store.images.observe(staging, 'web', v2, at(0));
    await store.images.observe(staging, 'web', v2, at(5)); // the same state again: nothing changes
    expect(await store.images.current(staging, 'web')).toEqual({ ...v2, since: at(0).toISOString() });
    await store.images.observe(staging, 'web', undefined, at(12)); // progressing or degraded: the clock stops
    expect(await store.images.current(staging, 'web')).toBeUndefined();
    await store.images.observe(staging, 'web', v2, at(20));
    await store.images.observe(staging, 'web', other, at(25)); // another image
    expect(await store.images.intervals(staging, 'web', image)).toEqual([
      { ...v2, since: at(20).toISOString(), until: at(25).toISOString() },
      { ...v2, since: at(0).toISOString(), until: at(12).toISOString() },
    ]);
    expect(await store.images.current(staging, 'web')).toMatchObject({ image: other.image, since: at(25).toISOString() });
    // Another tenant identity under the same name sees none of it.
    expect(await store.images.intervals({ ...staging, uid: '00000000-0000-4000-8000-0000000000a2' }, 'web', image)).toEqual([]);
  });

  it('leave one open interval when replicas report the same change at once', async () => {
    const store = await freshStore(engine);
    await Promise.all([1, 2, 3].map(() => store.images.observe(staging, 'web', v2, at(1))));
    expect(await store.images.intervals(staging, 'web', image)).toHaveLength(1);
  });

  it('keep the sandbox registry: a source pushed once, its digest found', async () => {
    const store = await freshStore(engine);
    expect(await store.images.built(image)).toBeUndefined();
    await store.images.push(image, v2.digest, 'deploy-service-a', at(0));
    await store.images.push(image, 'sha256:other', 'deploy-service-b', at(1));
    expect(await store.images.built(image)).toBe(v2.digest);
  });
});

describe('image names from the source', () => {
  it('are the source, not the tenant: lowercase, valid repository paths, the build file in the path', () => {
    expect(sourceImage('r.test/pds', { repo: 'Acme/Web', tag: '0.1.0' })).toBe('r.test/pds/src/acme/web:0.1.0');
    expect(sourceImage('r.test/pds', { repo: 'acme/web', tag: '0.1.0', dockerfilePath: 'Dockerfile' })).toBe('r.test/pds/src/acme/web:0.1.0');
    expect(sourceImage('r.test/pds', { repo: 'acme/web', tag: '0.1.0', dockerfilePath: 'docker/Dockerfile' })).toMatch(/^r\.test\/pds\/src\/acme\/web\/f-[0-9a-f]{16}:0\.1\.0$/);
    // Names the OCI grammar refuses, and names that look like the encoding, never share a path with another.
    const dotted = sourceImage('r', { repo: 'acme/.github', tag: '1.0.0' });
    expect(dotted).toBe(`r/src/acme/x--${Buffer.from('.github').toString('hex')}:1.0.0`);
    expect(sourceImage('r', { repo: `acme/x--${Buffer.from('.github').toString('hex')}`, tag: '1.0.0' })).not.toBe(dotted);
    expect(splitImage(`${dotted}@${simulatedDigest(dotted)}`)).toEqual({ image: dotted, digest: simulatedDigest(dotted) });
  });

  it('name a push credential per source path', () => {
    expect(pushSecretName({ repo: 'Acme/web' })).toBe('pds-registry-push-acme.web');
    expect(pushSecretName({ repo: 'acme/my_repo' })).toMatch(/^pds-registry-push-x-[0-9a-f]{16}$/);
  });
});
