/** Service logs (`docs/api.md#services-and-status`, `GET /api/v1/logs/{team}/{app}`; `docs/api.md#limits`: lines default 100, max 1000; since default 1h). */
import { z } from 'zod';
import { LogLine, ServiceName, TeamName } from '../core/model.js';
import { defineTool } from './define.js';
import { withNearService } from './not-found.js';

/** Most lines one call returns. */
export const MAX_LOG_LINES = 1000;
/** Longest look-back: 7 days, in seconds. */
export const MAX_SINCE_SECONDS = 7 * 24 * 3600;

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const;

/** `15m` → 900. Units s, m, h, d; whole numbers only. */
export function durationSeconds(text: string): number | undefined {
  const m = /^([1-9]\d{0,6})([smhd])$/.exec(text);
  return m ? Number(m[1]) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS] : undefined;
}

const Since = z
  .string()
  .default('1h')
  .refine((s) => durationSeconds(s) !== undefined, 'must be a duration like "15m", "1h", "6h" or "24h" (units s, m, h, d)')
  .refine((s) => (durationSeconds(s) ?? 0) <= MAX_SINCE_SECONDS, 'must be at most 7 days ("7d" or "168h")')
  .describe('How far back to look, e.g. "15m", "1h" (default), "24h"; at most "7d"');

export const getLogs = defineTool({
  name: 'platform_get_logs',
  title: 'Read service logs',
  description:
    'Recent log lines of one service (oldest first, the newest "lines" of the window), each with an ISO 8601 UTC ' +
    'timestamp and labels such as pod. Use to see why a deploy failed or a service is unhealthy. At most 1000 lines ' +
    '(default 100) from at most 7 days back (default 1h); "note" says what is shown and what was left out. Changes nothing.',
  input: z.object({
    team: TeamName.describe('Tenant name, e.g. "acme"'),
    app: ServiceName.describe('Service name, e.g. "web"'),
    lines: z.coerce
      .number({ message: 'must be a whole number of lines, e.g. 100' })
      .int('must be a whole number of lines, e.g. 100')
      .min(1, 'must be at least 1')
      .max(MAX_LOG_LINES, `must be at most ${MAX_LOG_LINES}`)
      .default(100)
      .describe('How many of the newest lines to return, 1-1000, e.g. 100 (default)'),
    since: Since,
  }),
  output: z.object({
    team: z.string(),
    app: z.string(),
    lines: z.array(LogLine),
    count: z.number().int(),
    note: z.string().describe('What is shown: source, window, and lines left out'),
  }),
  rest: { method: 'GET', path: '/api/v1/logs/{team}/{app}' },
  access: { tenant: (i) => i.team, role: 'viewer' },
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ team, app, lines, since }, { platform, identity }) => {
    const result = await platform.backend
      .logs(team, app, { lines, sinceSeconds: durationSeconds(since)! })
      .catch(async (err: unknown) => {
        throw await withNearService(err, platform, identity, team, app);
      });
    return { team, app, lines: result.lines, count: result.lines.length, note: result.note };
  },
});

export const logTools = [getLogs] as const;
