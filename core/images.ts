/**
 * Image identity (issue 20 item 4, "build once, promote what ran"): an image is named by its source — a repository at
 * a tag, built from one build file — not by the tenant that deploys it, so one source is built once and every tenant
 * that deploys it (each with the repository registered to it) runs the same bytes. GitOps manifests name the image by
 * digest (`<repository>:<tag>@sha256:…`), so what runs is exactly what was built and what promotion verified.
 *
 * Repository paths follow the OCI distribution spec's name grammar
 * (https://github.com/opencontainers/distribution-spec/blob/main/spec.md#pulling-manifests): lowercase components of
 * `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`. GitHub names are case-insensitive, so they are lowercased; a name the grammar
 * refuses (`.github`, `a..b`, `x-`) is written `x--<hex of its bytes>`, and so is every name that itself begins with
 * `x--`, so two sources never share a path.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The build file a deploy uses when it names none. */
export const DEFAULT_BUILD_FILE = 'Dockerfile';

/** What an image is built from: `dockerfile_repo`, `git_tag` and `dockerfile_path` of deploy-service. */
export interface ImageSource {
  /** `<owner>/<repo>`, e.g. `acme/web`. */
  repo: string;
  /** The git tag, e.g. `0.1.0`; also the image tag. */
  tag: string;
  /** Path of the build file in the repository; default {@link DEFAULT_BUILD_FILE}. */
  dockerfilePath?: string;
}

/** An image digest as registries report it (`Docker-Content-Digest`): `sha256:` and 64 lowercase hex digits. */
export const ImageDigest = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, 'must be an image digest "sha256:<64 hex digits>"')
  .describe('Image digest, e.g. "sha256:4f1c…" (64 hex digits)');

const OCI_COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;

/** One path component for a GitHub owner or repository name (see the module comment). */
function component(name: string): string {
  const lower = name.toLowerCase();
  return OCI_COMPONENT.test(lower) && !lower.startsWith('x--') ? lower : `x--${Buffer.from(lower).toString('hex')}`;
}

/**
 * The registry repository of a source: `<registry>/src/<owner>/<repo>`, plus `/f-<16 hex>` (a hash of the path) when
 * the build file is not {@link DEFAULT_BUILD_FILE} — the same repository and tag built from another file is another
 * image.
 * @param registry `PDS_REGISTRY` (or the sandbox's `registry.<domain>`), without trailing slash.
 * @example sourceRepository('registry.example.com/pds', { repo: 'Acme/web', tag: '0.1.0' }) // 'registry.example.com/pds/src/acme/web'
 */
export function sourceRepository(registry: string, source: ImageSource): string {
  const [owner = '', repo = ''] = source.repo.split('/');
  const file = source.dockerfilePath ?? DEFAULT_BUILD_FILE;
  const variant = file === DEFAULT_BUILD_FILE ? '' : `/f-${createHash('sha256').update(file).digest('hex').slice(0, 16)}`;
  return `${registry}/src/${component(owner)}/${component(repo)}${variant}`;
}

/**
 * The image of a source, by tag: `<registry>/src/<owner>/<repo>[/f-…]:<tag>`. Builds push it; manifests use
 * {@link pinnedImage}.
 * @example sourceImage('registry.example.com/pds', { repo: 'acme/web', tag: '0.1.0' }) // 'registry.example.com/pds/src/acme/web:0.1.0'
 */
export function sourceImage(registry: string, source: ImageSource): string {
  return `${sourceRepository(registry, source)}:${source.tag}`;
}

/**
 * An image by tag and digest, as GitOps manifests name it: the tag for people, the digest for what runs.
 * @example pinnedImage('r/src/acme/web:0.1.0', 'sha256:ab…') // 'r/src/acme/web:0.1.0@sha256:ab…'
 */
export function pinnedImage(image: string, digest: string): string {
  return `${image}@${digest}`;
}

/**
 * Split an image reference into its name (repository and tag, without digest) and digest.
 * @returns `digest` only when the reference carries a valid one.
 * @example splitImage('r/src/acme/web:0.1.0@sha256:ab…') // { image: 'r/src/acme/web:0.1.0', digest: 'sha256:ab…' }
 */
export function splitImage(reference: string): { image: string; digest?: string } {
  const at = reference.lastIndexOf('@');
  if (at < 0) return { image: reference };
  const digest = reference.slice(at + 1);
  return ImageDigest.safeParse(digest).success ? { image: reference.slice(0, at), digest } : { image: reference };
}

/** The tag of an image name `<repository>:<tag>` (after the last `:` of the last path component), or `undefined`. */
export function imageTagOf(image: string): string | undefined {
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon < 0 ? undefined : last.slice(colon + 1);
}

/**
 * The sandbox's stand-in for a registry's digest: SHA-256 of the image name, so the same source always has the same
 * digest and two sources never share one.
 */
export function simulatedDigest(image: string): string {
  return `sha256:${createHash('sha256').update(`image\0${image}`).digest('hex')}`;
}

/**
 * The Secret (type `kubernetes.io/dockerconfigjson`, in the workflow namespace) a platform team may make to hold a push
 * credential scoped to one source's path (`<registry>/src/<owner>/<repo>/*`): `pds-registry-push-<owner>.<repo>`
 * (lowercase), or `pds-registry-push-x-<16 hex>` when the name is not a DNS label (`_`, a leading `.`). deploy/README.md
 * "Builds and credentials".
 * @example pushSecretName({ repo: 'Acme/web', tag: '0.1.0' }) // 'pds-registry-push-acme.web'
 */
export function pushSecretName(source: Pick<ImageSource, 'repo'>): string {
  const [owner = '', repo = ''] = source.repo.toLowerCase().split('/');
  const label = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
  const name = `pds-registry-push-${owner}.${repo}`;
  return label.test(owner) && label.test(repo) && name.length <= 253
    ? name
    : `pds-registry-push-x-${createHash('sha256').update(source.repo.toLowerCase()).digest('hex').slice(0, 16)}`;
}
