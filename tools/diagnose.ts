/**
 * `platform_diagnose_service` (issue 11 item 8): one read that gathers what an agent would otherwise fetch in five
 * calls and correlate itself — GitOps status, the service's last workflow and its failed step, recent error log
 * lines, quota pressure, probe-path mismatches (`docs/api.md#scaffolding-templates` rules 6-8) — into findings and the next
 * calls that act on them, worded for the caller's door.
 */
import { z } from 'zod';
import { NotFound, PlatformError } from '../core/errors.js';
import { AuditEntry, LogLine, ServiceName, Status, TeamName, type Service } from '../core/model.js';
import { RolloutView } from '../core/rollouts.js';
import type { Door, NextCall } from '../core/operations/index.js';
import { previewOperations } from '../core/operations/preview-operations.js';
import type { Platform } from '../core/ports.js';
import { didYouMean } from '../core/near.js';
import { quotaUse } from '../core/quantity.js';
import type { Identity } from '../auth/identity.js';
import { defineTool } from './define.js';
import { tenantNotFound } from './not-found.js';
import { visibilityOf } from './workflows.js';
import { viewPhase } from './workflow-view.js';

/** Log lines read for the diagnosis: the newest 300 of the last hour. */
const LOG_WINDOW = { lines: 300, sinceSeconds: 3600 } as const;
/** Error lines the diagnosis shows, newest last. */
export const MAX_ERROR_LINES = 10;
/** Quota use from which a dimension counts as under pressure. */
export const QUOTA_PRESSURE = 0.9;

/** A log line that reports a problem: errors, failures, crashes, refused probes, 5xx answers. */
const ERROR_LINE = /\b(error|err|fatal|panic|exception|traceback|failed|failure|crash\w*|oomkilled|killed|back-off|unhealthy|refused|denied)\b|(→|status(code)?:?) 5\d\d\b/i;
/** A probe as Kubernetes reports it (`Readiness probe failed: … statuscode: 404`) or the sandbox logs it (`… GET /healthz → 200`). */
const PROBE_LINE = /\b(liveness|readiness|startup) probe\b/i;

/** A probe line's path and status code, when it says; `undefined` for a line that is not about a probe. */
export function probeOutcome(line: string): { path?: string; code?: string; failed: boolean } | undefined {
  if (!PROBE_LINE.test(line)) return undefined;
  const code = /(?:statuscode:|→)\s*(\d{3})/i.exec(line)?.[1];
  const path = /\bGET\s+(\/\S*)/.exec(line)?.[1];
  return { path, code, failed: /probe failed/i.test(line) || (code !== undefined && !code.startsWith('2')) };
}

const Finding = z.object({
  area: z.enum(['status', 'workflow', 'rollout', 'logs', 'quota', 'probe']),
  severity: z.enum(['ok', 'info', 'warning', 'error']).describe('info: about something beside the service (its previews); never changes the verdict'),
  message: z.string(),
});
type Finding = z.infer<typeof Finding>;

export const Diagnosis = z.object({
  team: z.string(),
  app: z.string(),
  verdict: z.enum(['healthy', 'degraded', 'failing']).describe('Of the service itself: failing: any error finding; degraded: any warning'),
  summary: z.string().describe('One line: the most important finding'),
  findings: z.array(Finding),
  nextActions: z.array(z.string()).describe('Calls that act on the findings, in the words of the caller\'s door'),
  status: Status.shape.argocd.optional(),
  rollout: RolloutView.optional().describe('The current or last canary or blue-green release'),
  /** The service's own last workflow; its previews' workflows are findings of severity info. */
  lastWorkflow: AuditEntry.pick({ workflowName: true, operation: true, status: true, timestamp: true, message: true, parameters: true })
    .extend({ failedStep: z.string().optional().describe('Name of the step that failed') })
    .optional(),
  errorLines: z.array(LogLine),
  quota: z.array(z.object({ resource: z.string(), allocated: z.string(), used: z.string(), percent: z.number() })),
});
export type Diagnosis = z.infer<typeof Diagnosis>;

/**
 * The audit entries of one service's workflows that the caller may see, newest first (at most `limit`): its own
 * operations and its previews'.
 */
async function serviceHistory(platform: Platform, identity: Identity, team: string, app: string, limit: number): Promise<AuditEntry[]> {
  return platform.audit.query({ visible: await visibilityOf(platform, identity), tenant: team, service: app, limit });
}

/** The path a build file's `HEALTHCHECK` requests (`curl -f http://127.0.0.1:8787/healthz` → `/healthz`), if any. */
export function healthcheckPath(buildFile: string): string | undefined {
  const line = buildFile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .find((l) => /^\s*HEALTHCHECK\b/i.test(l) && !/\bNONE\s*$/i.test(l));
  const url = line && /https?:\/\/[^\s"'\]]+/.exec(line)?.[0];
  if (!url) return undefined;
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/** Gathers the facts and findings; each source that cannot be read becomes a finding, never a failed diagnosis. */
async function diagnose(platform: Platform, identity: Identity, door: Door, service: Service): Promise<Diagnosis> {
  const { team, name: app } = service;
  const findings: Finding[] = [];
  const actions: NextCall[] = [];
  const act = (call: NextCall) => actions.push(call);
  const unreadable = (area: Finding['area'], what: string, err: unknown) => {
    if (!(err instanceof PlatformError)) throw err;
    findings.push({ area, severity: 'warning', message: `could not read ${what}: ${err.message}` });
  };

  // GitOps status.
  let status: Diagnosis['status'];
  let rollout: RolloutView | undefined;
  try {
    const read = await platform.backend.status(team, app);
    status = read.argocd;
    rollout = read.rollout;
    const { syncStatus, healthStatus, message } = status;
    const detail = message ? ` (${message})` : '';
    if (healthStatus === 'Healthy' && syncStatus === 'Synced') {
      findings.push({ area: 'status', severity: 'ok', message: `Synced and Healthy at ${service.imageTag || 'no tag yet'}` });
    } else if (healthStatus === 'Degraded' || healthStatus === 'Missing') {
      findings.push({ area: 'status', severity: 'error', message: `${healthStatus} and ${syncStatus}${detail}` });
      act({ tool: 'platform_get_logs', arguments: { team, app, since: '1h' } });
    } else {
      findings.push({ area: 'status', severity: 'warning', message: `${healthStatus} and ${syncStatus}${detail}` });
    }
  } catch (err) {
    if (err instanceof NotFound) findings.push({ area: 'status', severity: 'error', message: `no GitOps application: ${err.message}` });
    else unreadable('status', 'the GitOps status', err);
  }

  // The last workflow of the service itself, and the tag to return to when it was a failed release. A preview's
  // workflows (queued, running, failed) are about another application: information, never the service's verdict.
  let lastWorkflow: Diagnosis['lastWorkflow'];
  const history = await serviceHistory(platform, identity, team, app, 50);
  const own = history.filter((e) => !isPreviewOperation(e.operation));
  const last = own[0];
  if (last) {
    const run = await platform.workflows.get(last.workflowName);
    const message = run?.message ?? last.message;
    const failedStep = run?.steps.find((s) => s.status === 'failed')?.name;
    lastWorkflow = {
      workflowName: last.workflowName,
      operation: last.operation,
      status: run?.phase ?? last.status,
      timestamp: last.timestamp,
      message,
      parameters: last.parameters,
      ...(failedStep && { failedStep }),
    };
    const what = `${last.operation}${last.parameters.action ? ` (${last.parameters.action})` : ''} ${last.workflowName}`;
    const rolledBack = rollout?.phase === 'Aborted' && rollout.workflowName === last.workflowName;
    if (lastWorkflow.status === 'failed' && run?.cancelledBy) {
      // Stopped on purpose (issue 22): the service was left on its last good version, so this alone is no failure.
      findings.push({ area: 'workflow', severity: 'info', message: `last workflow ${what} was ${message}; the service runs what it ran before` });
      act({ tool: 'platform_retry_workflow', arguments: { name: last.workflowName } });
    } else if (lastWorkflow.status === 'failed' && rolledBack) {
      // The release failed but protected the service: it serves the stable tag. A warning, not a failing service.
      findings.push({
        area: 'rollout',
        severity: 'warning',
        message: `the ${rollout!.strategy} release of ${rollout!.canaryTag} was rolled back (${message}); ${rollout!.stableTag} serves all traffic. ` +
          `Fix ${rollout!.canaryTag} and deploy a new tag`,
      });
      act({ tool: 'platform_get_workflow', arguments: { name: last.workflowName } });
    } else if (lastWorkflow.status === 'failed') {
      const at = failedStep ? ` at step "${failedStep}"` : '';
      findings.push({ area: 'workflow', severity: 'error', message: `last workflow ${what} failed${at}: ${message}` });
      act({ tool: 'platform_get_workflow', arguments: { name: last.workflowName } });
      // A failed release that left the service unhealthy: offer the newest other tag that deployed successfully.
      const good = own.find((e) => e.status === 'succeeded' && deployedTag(e) && deployedTag(e) !== deployedTag(last));
      if (good && deployedTag(last) && status && status.healthStatus !== 'Healthy') {
        act({ tool: 'platform_rollback_service', arguments: { team_name: team, component_name: app, target_tag: deployedTag(good)! } });
      }
    } else if (lastWorkflow.status === 'submitted' && rollout?.workflowName === last.workflowName && (rollout.phase === 'Paused' || rollout.phase === 'Progressing')) {
      findings.push({
        area: 'rollout',
        severity: 'info',
        message: `${rollout.strategy} release of ${rollout.canaryTag} in progress: ${rollout.canaryWeight}% of traffic (step ${rollout.step}/${rollout.steps}), ` +
          `${rollout.stableTag || 'nothing'} serves the rest${rollout.pausedUntil ? `; paused until ${rollout.pausedUntil}` : ''}`,
      });
      act({ tool: 'platform_get_workflow', arguments: { name: last.workflowName, wait_seconds: 45 } });
      act({ tool: 'platform_promote_rollout', arguments: { team, app } });
      act({ tool: 'platform_abort_rollout', arguments: { team, app } });
    } else if (lastWorkflow.status === 'submitted') {
      findings.push({ area: 'workflow', severity: 'warning', message: `workflow ${what} is still running: ${message}` });
      act({ tool: 'platform_get_workflow', arguments: { name: last.workflowName } });
    } else {
      findings.push({ area: 'workflow', severity: 'ok', message: `last workflow ${what} succeeded` });
    }
  }
  const preview = history.find((e) => isPreviewOperation(e.operation));
  if (preview && (!last || preview.timestamp >= last.timestamp)) {
    const run = await platform.workflows.get(preview.workflowName);
    const phase = run ? viewPhase(run) : preview.status;
    const failedStep = run?.steps.find((s) => s.status === 'failed')?.name;
    const where = `${preview.operation} ${preview.workflowName}${preview.parameters.image_tag ? ` (${preview.parameters.image_tag})` : ''}`;
    const state =
      phase === 'submitted' ? 'is queued' : phase === 'running' ? 'is running' : phase === 'failed' ? `failed${failedStep ? ` at step "${failedStep}"` : ''}` : 'succeeded';
    findings.push({ area: 'workflow', severity: 'info', message: `preview workflow ${where} ${state}; the service itself is judged apart from it` });
    if (phase !== 'succeeded') act({ tool: 'platform_get_workflow', arguments: { name: preview.workflowName } });
  }

  // Recent error lines, and refused probes among them.
  let errorLines: LogLine[] = [];
  let probeRefusal: { path?: string; code: string } | undefined;
  try {
    const { lines } = await platform.backend.logs(team, app, LOG_WINDOW);
    const errors = lines.filter((l) => ERROR_LINE.test(l.line));
    errorLines = errors.slice(-MAX_ERROR_LINES);
    for (const l of lines) {
      const probe = probeOutcome(l.line);
      if (probe?.failed) probeRefusal = { path: probe.path, code: probe.code ?? 'no answer' };
      else if (probe) probeRefusal = undefined; // a later success means the probes pass now
    }
    if (errors.length) {
      findings.push({
        area: 'logs',
        severity: 'warning',
        message: `${errors.length} error line${errors.length === 1 ? '' : 's'} in the last hour; newest: ${errors.at(-1)!.line}`,
      });
      act({ tool: 'platform_get_logs', arguments: { team, app, since: '1h' } });
    }
  } catch (err) {
    unreadable('logs', 'the logs', err);
  }

  // Quota pressure.
  const quota: Diagnosis['quota'] = [];
  try {
    const usage = await platform.backend.resources(team);
    for (const q of quotaUse(usage.allocated, usage.used)) {
      const percent = Number.isFinite(q.ratio) ? Math.round(q.ratio * 100) : 100;
      quota.push({ resource: q.resource, allocated: usage.allocated[q.resource], used: usage.used[q.resource], percent });
      if (q.ratio < QUOTA_PRESSURE) continue;
      findings.push({
        area: 'quota',
        severity: q.ratio >= 1 ? 'error' : 'warning',
        message: `${q.resource} ${usage.used[q.resource]} of ${usage.allocated[q.resource]} used (${percent}%)` +
          (q.ratio >= 1 ? ': new pods, rollouts and previews cannot start' : ': close to the tenant quota'),
      });
      act({ tool: 'platform_get_resources', arguments: { tenant: team } });
    }
  } catch (err) {
    unreadable('quota', 'the tenant\'s resource usage', err);
  }

  // Probe paths: the platform's probes (health_check_path at onboarding, else /healthz) against the image's HEALTHCHECK.
  const onboarding = history.find((e) => e.operation === 'deploy-service' && e.parameters.action === 'onboard' && e.status !== 'failed');
  const probePath = onboarding?.parameters.health_check_path ?? '/healthz';
  if (probeRefusal) {
    const why = probeRefusal.code === '401' || probeRefusal.code === '403'
      ? 'the health path requires authorization; probes send none, so exempt it from the authentication middleware (scaffolding rule 8 of the API contract)'
      : `the app does not answer ${probeRefusal.path ?? probePath} with 200; serve it, or onboard with health_check_path set to the path it serves (scaffolding rule 7 of the API contract)`;
    findings.push({ area: 'probe', severity: 'error', message: `probes are refused (${probeRefusal.code}): ${why}` });
  }
  const repo = onboarding?.parameters.dockerfile_repo;
  if (repo) {
    const buildFile = onboarding.parameters.dockerfile_path ?? 'Dockerfile';
    try {
      const tree = await platform.codeHost.readTree(repo, { read: [buildFile] });
      const text = tree.files[buildFile];
      const imagePath = text === undefined ? undefined : healthcheckPath(text);
      if (imagePath && imagePath !== probePath) {
        findings.push({
          area: 'probe',
          severity: 'warning',
          message: `the platform probes ${probePath} but the image's HEALTHCHECK in ${repo}/${buildFile} requests ${imagePath}; ` +
            'update one to match, or the image reports unhealthy wherever its own check runs (scaffolding rule 7 of the API contract)',
        });
      }
    } catch (err) {
      // A code host that cannot read the repository (the sandbox's) leaves the image's check unknown, not wrong.
      if (!(err instanceof NotFound)) unreadable('probe', `${repo}/${buildFile}`, err);
    }
  }

  const errors = findings.filter((f) => f.severity === 'error');
  const warnings = findings.filter((f) => f.severity === 'warning');
  const verdict = errors.length ? 'failing' : warnings.length ? 'degraded' : 'healthy';
  if (verdict === 'healthy') act({ tool: 'platform_get_service', arguments: { team, app } });
  const top = errors[0] ?? warnings[0];
  const summary = top
    ? `${team}/${app} is ${verdict}: ${top.message}`
    : `${team}/${app} is healthy: ${service.imageTag ? `${service.imageTag} runs` : 'nothing deployed yet'} at https://${service.host}`;
  const seen = new Set<string>();
  const nextActions = actions.map((call) => door.name(call)).filter((text) => !seen.has(text) && seen.add(text));
  return { team, app, verdict, summary, findings, nextActions, status, ...(rollout && { rollout }), lastWorkflow, errorLines, quota };
}

const PREVIEW_OPERATIONS: ReadonlySet<string> = new Set(Object.keys(previewOperations));
/** True for the operations of a service's previews (preview-deploy, preview-delete), which are not the service's own. */
function isPreviewOperation(operation: string): boolean {
  return PREVIEW_OPERATIONS.has(operation);
}

/** The tag an entry deployed: `git_tag` of a deploy or onboarding, `target_tag` of a rollback; else `undefined`. */
function deployedTag(entry: AuditEntry): string | undefined {
  if (entry.operation === 'rollback-service') return entry.parameters.target_tag;
  if (entry.operation === 'deploy-service' && entry.parameters.action !== 'update-config') return entry.parameters.git_tag;
  return undefined;
}

export const diagnoseService = defineTool({
  name: 'platform_diagnose_service',
  title: 'Diagnose a service',
  description:
    'What is wrong with a service, in one read: sync and health, the last workflow\'s failed step, a canary rolled ' +
    'back and why, recent error log lines, quota pressure, probe-path mismatches; findings, a verdict and the next calls. Use first when a service ' +
    'is unhealthy or a deploy failed. Changes nothing.',
  input: z.object({ team: TeamName.describe('Tenant, e.g. "acme"'), app: ServiceName.describe('Service, e.g. "web"') }),
  output: Diagnosis,
  rest: { method: 'GET', path: '/api/v1/diagnose/{team}/{app}' },
  access: { tenant: (i) => i.team, role: 'viewer' },
  kind: 'read',
  toolset: 'observe',
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ team, app }, { platform, identity, door }) => {
    const service = await platform.backend.getService(team, app);
    if (!service) {
      if (!(await platform.backend.getTenant(team))) throw await tenantNotFound(platform.backend, identity, team);
      const list = door.name({ tool: 'platform_list_services', arguments: { team } });
      const near = didYouMean(app, (await platform.backend.listServices(team)).map((s) => s.name));
      throw new NotFound(`service not found: ${team}/${app}${near}${near ? ' The' : '; the'} tenant's services: ${list}`);
    }
    return diagnose(platform, identity, door, service);
  },
});

export const diagnoseTools = [diagnoseService] as const;
