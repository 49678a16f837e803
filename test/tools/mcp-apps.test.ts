/** The MCP Apps negotiation and links (`tools/mcp-apps.ts`), without a server: which clients get views, which tools link one. */
import { describe, expect, it } from 'vitest';
import { APP_MIME_TYPE, APPS_EXTENSION, appToolListing, clientRendersApps, viewOf } from '../../tools/mcp-apps.js';
import { toolListing } from '../../tools/mcp-listing.js';
import { allTools } from '../../tools/registry.js';

describe('clientRendersApps', () => {
  it('is true only for a client that declares the extension with the HTML type', () => {
    expect(clientRendersApps({ extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } as never)).toBe(true);
    expect(clientRendersApps({ extensions: { [APPS_EXTENSION]: { mimeTypes: ['text/html', APP_MIME_TYPE] } } } as never)).toBe(true);
    // mimeTypes is required by the spec; another type is another kind of App.
    expect(clientRendersApps({ extensions: { [APPS_EXTENSION]: {} } } as never)).toBe(false);
    expect(clientRendersApps({ extensions: { [APPS_EXTENSION]: { mimeTypes: ['text/uri-list'] } } } as never)).toBe(false);
    expect(clientRendersApps({ extensions: { 'io.example/other': { mimeTypes: [APP_MIME_TYPE] } } } as never)).toBe(false);
    expect(clientRendersApps({ experimental: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } as never)).toBe(false);
    expect(clientRendersApps({})).toBe(false);
    expect(clientRendersApps(undefined)).toBe(false);
  });
});

describe('the views tools link', () => {
  it('links the workflow view from what submits or reads a workflow and the service view from its status', () => {
    const linked = Object.fromEntries(allTools.filter((t) => viewOf(t)).map((t) => [t.name, viewOf(t)]));
    expect(linked.platform_get_workflow).toBe('workflow');
    expect(linked.platform_get_status).toBe('service');
    for (const tool of allTools.filter((t) => t.operation || t.dispatch)) expect(linked[tool.name], tool.name).toBe('workflow');
    expect(Object.keys(linked).length).toBe(allTools.filter((t) => t.operation || t.dispatch).length + 2);
  });

  it('lists the same tools with _meta.ui.resourceUri added, and nothing else changed', () => {
    const plain = toolListing(allTools);
    const apps = appToolListing(allTools);
    expect(apps.map(({ _meta, ...rest }) => rest)).toEqual(plain);
    expect(apps.find((t) => t.name === 'platform_get_status')!._meta).toEqual({ ui: { resourceUri: 'ui://pds/service' } });
    expect(apps.find((t) => t.name === 'platform_rollback_service')!._meta).toEqual({ ui: { resourceUri: 'ui://pds/workflow' } });
    expect(apps.find((t) => t.name === 'platform_get_logs')!._meta).toBeUndefined();
    // Built once per tool set: the cache hands back the same array.
    expect(appToolListing(allTools)).toBe(apps);
  });
});
