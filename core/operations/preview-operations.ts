/**
 * The preview operations (`docs/api.md#operations`): `preview-deploy` opens an ephemeral environment of a service at an
 * image tag, named by `previewName()` (`core/names.ts`), removed after `ttl_hours`; `preview-delete` removes it early.
 */
import { z } from 'zod';
import { SemVerTag } from '../model.js';
import { previewName } from '../names.js';
import { defineOperation } from './contract.js';
import { requireFreeApplicationName, requirePreview, requireQuotaHeadroom, requireService } from './preflight.js';
import { checkCombinedName, ComponentNameParam, NAMES_VALID, TeamNameParam, TtlHoursParam } from './parameters.js';

export const deployPreview = defineOperation({
  id: 'preview-deploy',
  toolset: 'deploy',
  tool: 'platform_deploy_preview',
  title: 'Open a preview environment',
  displayName: 'Deploy Preview',
  riskLevel: 'low',
  requiresConfirm: false,
  destructive: false,
  role: 'member',
  duration: '1-3 minutes',
  followUp: {
    tool: 'platform_get_status',
    why: 'check the preview\'s health (it is listed with componentType "preview")',
    arguments: (p) => ({ team: p.team_name, app: previewName(p.component_name, p.image_tag) }),
  },
  description:
    'Starts an ephemeral preview environment of an existing service at an image tag, with its own host, removed ' +
    'automatically after ttl_hours (at most 720). Use to review a build before it goes to the main environment; ' +
    'refused at once when the quota is full.',
  parameters: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      image_tag: SemVerTag.describe('Image tag to preview, SemVer X.Y.Z, e.g. "0.2.0"'),
      ttl_hours: TtlHoursParam,
    })
    .superRefine(checkCombinedName, NAMES_VALID),
  target: (p) => ({ team: p.team_name, service: p.component_name }),
  async preflight(p, ctx) {
    await requireService(ctx, p.team_name, p.component_name);
    await requireFreeApplicationName(ctx, p.team_name, previewName(p.component_name, p.image_tag), 'image_tag');
    return { warnings: await requireQuotaHeadroom(ctx, p.team_name, 'a preview') };
  },
  summarize: (p) => `open a preview of ${p.team_name}/${p.component_name} at ${p.image_tag} for ${p.ttl_hours} h`,
});

export const deletePreview = defineOperation({
  id: 'preview-delete',
  toolset: 'deploy',
  tool: 'platform_delete_preview',
  title: 'Remove a preview environment',
  displayName: 'Delete Preview',
  riskLevel: 'low',
  requiresConfirm: false,
  destructive: true,
  role: 'member',
  duration: 'under a minute',
  description:
    'Removes a preview environment before its TTL ends. Touches only the preview of that image tag, never the main ' +
    'service; refused at once when there is no such preview.',
  parameters: z
    .strictObject({
      team_name: TeamNameParam,
      component_name: ComponentNameParam,
      image_tag: SemVerTag.describe('Image tag of the preview to remove, e.g. "0.2.0"'),
    })
    .superRefine(checkCombinedName, NAMES_VALID),
  target: (p) => ({ team: p.team_name, service: p.component_name }),
  preflight: async (p, ctx) => requirePreview(ctx, p.team_name, p.component_name, p.image_tag),
  summarize: (p) => `remove the preview of ${p.team_name}/${p.component_name} at ${p.image_tag}`,
});

/** The preview operations, by id. */
export const previewOperations = {
  'preview-deploy': deployPreview,
  'preview-delete': deletePreview,
} as const;
