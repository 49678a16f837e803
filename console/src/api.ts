/**
 * The console's one client of pds: `/console/api/{path}` is `/api/v1/{path}` with the person's session (the server adds
 * the bearer token; `rest/console.ts`). Every state-changing call sends the session's CSRF token. Errors keep the
 * API's `{ "error" }` text and its stable code (`PDS-Error-Code`), and a confirmation request its plan and value.
 */
import type { AuditEntry, LogLine, ResourceUsage, Service, Status, TenantDetail, Tenant, WorkflowStep } from '../../core/model.js';

/** The shared resource types (`core/model.ts`), as the API answers them. */
export type { AuditEntry, LogLine, ResourceUsage, Service, Status, TenantDetail, Tenant, WorkflowStep };

/** `GET /api/v1/tenants/{name}`'s answer. */
export interface TenantAnswer {
  tenant: TenantDetail;
  services: Service[];
}

/** An answer other than 2xx: the API's message, its code and, for a confirmation request, what it asks. */
export class ApiError extends Error {
  /**
   * @param status the HTTP status; @param code `PDS-Error-Code` (e.g. `FORBIDDEN`); @param message the API's `error`;
   * @param confirm a confirmation request's value, plan and expiry (`PDS-Confirm*` headers).
   */
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly confirm?: { value: string; plan: string; expiresAt: string },
  ) {
    super(message);
  }
}

/** Who is signed in (`GET /console/api/session`). */
export interface Session {
  userId: string;
  via: 'oauth' | 'code';
  csrfToken: string;
}

let csrf = '';
let user = '';
/** The signed-in person's user id. */
export const currentUser = (): string => user;
/** Called when an answer says the session is gone (401): the app shows the sign-in page. */
let onSignedOut: () => void = () => {};

/** Remember the signed-in person (their CSRF token for state-changing calls) and what to do when the session ends. */
export function setSession(session: Session | undefined, signedOut?: () => void): void {
  csrf = session?.csrfToken ?? '';
  user = session?.userId ?? '';
  if (signedOut) onSignedOut = signedOut;
}

/** A query string from the defined values, e.g. `{ team: 'acme', limit: 20 }` → `?team=acme&limit=20`. */
export function query(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== '') params.set(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function request<T>(url: string, method: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const data = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) {
    const code = res.headers.get('pds-error-code') ?? '';
    const confirm = res.headers.get('pds-confirm');
    if (res.status === 401) onSignedOut();
    throw new ApiError(
      res.status,
      code,
      data.error ?? `HTTP ${res.status}`,
      confirm ? { value: confirm, plan: res.headers.get('pds-confirm-plan') ?? '', expiresAt: res.headers.get('pds-confirm-expires') ?? '' } : undefined,
    );
  }
  return data as T;
}

/** `GET /api/v1{path}` as the signed-in person. */
export const get = <T>(path: string): Promise<T> => request<T>(`/console/api${path}`, 'GET');
/** A state-changing call to `/api/v1{path}`. */
export const send = <T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> => request<T>(`/console/api${path}`, method, body);

/** The session, or `undefined` when nobody is signed in. */
export async function session(): Promise<Session | undefined> {
  try {
    return await request<Session>('/console/api/session', 'GET');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return undefined;
    throw err;
  }
}

/** Exchange a one-time sign-in code (sandbox) for a session. */
export const signInWithCode = (code: string): Promise<Session> => request<Session>('/console/api/session/code', 'POST', { code });
/** End the session (the server revokes its tokens). */
export const signOut = (): Promise<unknown> => request('/console/api/session/sign-out', 'POST');

/** `POST /api/v1/operations/{name}/execute`'s answer. */
export interface Execution {
  workflowName: string;
  operation: string;
  status: string;
  message: string;
}

/** Execute an operation; a confirmation request comes back as an {@link ApiError} with `confirm`. */
export const execute = (operation: string, parameters: Record<string, string>): Promise<Execution> =>
  send<Execution>('POST', `/operations/${operation}/execute`, parameters);

/** A workflow as `GET /api/v1/workflows/{name}` answers it. */
export interface WorkflowView {
  workflow: string;
  audit: AuditEntry;
  note: string;
  phase: string;
  settled: boolean;
  steps: WorkflowStep[];
  host?: string;
  failedStep?: FailedStep;
  approval?: { id: string; required: number; approvedBy: string[]; expiresAt: string };
}

/** The failed step of a settled workflow, with the tail of its log. */
export interface FailedStep {
  name: string;
  message: string;
  logTail: string[];
}

/** One row of `GET /api/v1/workflows`. */
export interface WorkflowItem {
  name: string;
  operation: string;
  phase: string;
  startedAt: string;
  finishedAt?: string;
  userId: string;
  parameters: Record<string, string>;
  message: string;
}

/** A `step` event of `GET /api/v1/workflows/{name}/events`: a step started or finished. */
export interface StepEvent {
  workflow: string;
  phase: string;
  index: number;
  total: number;
  step: WorkflowStep;
}

/** The `settled` event: the outcome, with every step. */
export interface SettledEvent {
  workflow: string;
  phase: string;
  settled: boolean;
  host?: string;
  failedStep?: FailedStep;
  message: string;
  steps: WorkflowStep[];
}

/**
 * Follow a workflow's server-sent events until it settles: each step change, then the outcome. The browser's
 * EventSource reconnects by itself after a dropped connection (the stream sends the steps so far again); a stream
 * the server closed for good (an `error` event, a session that ended) is not retried.
 * @returns a function that stops following.
 */
export function followWorkflow(name: string, on: { step: (e: StepEvent) => void; settled: (e: SettledEvent) => void; failed?: () => void }): () => void {
  const source = new EventSource(`/console/api/workflows/${encodeURIComponent(name)}/events`);
  source.addEventListener('step', (e) => on.step(JSON.parse((e as MessageEvent<string>).data) as StepEvent));
  source.addEventListener('settled', (e) => {
    source.close();
    on.settled(JSON.parse((e as MessageEvent<string>).data) as SettledEvent);
  });
  source.addEventListener('error', (e) => {
    const data = (e as MessageEvent<string>).data;
    if (data || source.readyState === EventSource.CLOSED) {
      source.close();
      on.failed?.();
    }
  });
  return () => source.close();
}

/** An approval request (issue 20), as `GET /api/v1/approvals` lists it. */
export interface Approval {
  id: string;
  /** `workflow` (an execution waits) or `promote` (a promote of the release of `workflowName` waits, issue 22). */
  subject?: 'workflow' | 'promote';
  workflowName: string;
  team: string;
  operation: string;
  parameters: Record<string, string>;
  requestedBy: string;
  requestedAt: string;
  required: number;
  approvers: string[];
  approvedBy: string[];
  state: string;
  expiresAt: string;
  reason?: string;
  /** A promote, once approved: what it did. */
  outcome?: string;
  /** Whether the caller may decide it now. */
  canDecide?: boolean;
}
