/**
 * Names pds derives from tenant and service names, each computed in exactly one place so the execute pipeline, both
 * backends, the WorkflowTemplates' arguments and the messages agents read always agree.
 */

/**
 * The Argo CD Application of a service, `<team>-<service>` (`docs/api.md#status`: `argocd.name`). Also the name of the
 * service's Deployment, Service and Ingress.
 * @example applicationName('acme', 'web') // 'acme-web'
 */
export function applicationName(team: string, service: string): string {
  return `${team}-${service}`;
}

/**
 * The public host of a service, `<team>-<service>.<domain>` (`docs/api.md#first-time-onboarding-sequence`, step 5).
 * @param domain `PDS_DOMAIN`, e.g. `apps.example.com`.
 * @example serviceHost('acme', 'web', 'apps.example.com') // 'acme-web.apps.example.com'
 */
export function serviceHost(team: string, service: string, domain: string): string {
  return `${applicationName(team, service)}.${domain}`;
}

/**
 * The name of the preview environment of `service` at `imageTag`: `<service>-preview-<x>-<y>-<z>`. It is a service of
 * the same tenant, so its host and Application follow {@link serviceHost} and {@link applicationName}.
 * @example previewName('web', '0.2.0') // 'web-preview-0-2-0'
 */
export function previewName(service: string, imageTag: string): string {
  return `${service}-preview-${imageTag.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')}`;
}

/**
 * The container image of a service at a tag, `<registry>/<team>/<service>:<tag>`.
 * @param registry `PDS_REGISTRY` without trailing slash, e.g. `registry.example.com/pds`.
 * @example imageRef('registry.example.com', 'acme', 'web', '0.1.0') // 'registry.example.com/acme/web:0.1.0'
 */
export function imageRef(registry: string, team: string, service: string, tag: string): string {
  return `${registry}/${team}/${service}:${tag}`;
}

/**
 * The Argo WorkflowTemplate an operation runs: named as the operation (`docs/api.md#operation-definition`
 * `workflowTemplate`), e.g. `deploy-service`.
 */
export function workflowTemplateName(operation: string): string {
  return operation;
}

/** Path of pds's OAuth 2.0 Protected Resource Metadata (RFC 9728 §3); append a resource path (`/mcp`) per §3.1. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * The URL of pds's RFC 9728 metadata, which every 401 and 403 `insufficient_scope` challenge names as
 * `resource_metadata` so MCP clients find the authorization server.
 * @example protectedResourceMetadataUrl('https://pds.example.com') // 'https://pds.example.com/.well-known/oauth-protected-resource'
 */
export function protectedResourceMetadataUrl(baseUrl: string, resourcePath = ''): string {
  return `${baseUrl}${PROTECTED_RESOURCE_PATH}${resourcePath}`;
}
