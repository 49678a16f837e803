/**
 * Every environment variable pds reads, in one place, validated with zod (DESIGN.md "Configuration").
 * A bad value stops start-up with a message that names the variable and what is allowed.
 */
import path from 'node:path';
import { z } from 'zod';
import { USER_CLAIMS, type UserClaim } from './auth/external-jwt.js';
import { GITHUB_ACTIONS_ISSUER } from './auth/github-actions.js';
import { MIN_SECRET_CHARS } from './auth/self-issued.js';
import { LOG_LEVELS, type LogLevel } from './core/logger.js';
import { parseToolsets, type Toolset } from './tools/toolsets.js';

const csv = z
  .string()
  .default('')
  .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean));

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .default('false')
  .transform((s) => s === 'true' || s === '1' || s === 'yes');

/** `scheme://host[:port]` with nothing after it, as browsers send it in `Origin`; normalized by WHATWG URL rules. */
const origin = z.string().transform((value, ctx) => {
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  const bare = parsed && !parsed.username && !parsed.password && parsed.pathname === '/' && !parsed.search && !parsed.hash;
  if (!parsed || !bare || !/^https?:$/.test(parsed.protocol)) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not an origin; write scheme://host[:port] without a path, e.g. "https://app.example.com"` });
    return z.NEVER;
  }
  return parsed.origin;
});

/** A Kubernetes namespace name (a DNS label of at most 63 characters). */
const namespace = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name (a DNS label), e.g. "pds-workflows"');

const url = (example: string) => z.url({ message: `must be an absolute URL, e.g. "${example}"` }).transform((u) => u.replace(/\/+$/, ''));

function isPostgresUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'postgres:' || u.protocol === 'postgresql:') && u.hostname !== '';
  } catch {
    return false;
  }
}

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  PDS_BASE_URL: url('https://pds.example.com').optional(),
  PDS_DATA_DIR: z.string().default('./.pds'),
  PDS_BACKEND: z.enum(['sandbox', 'kubernetes']).default('sandbox'),
  PDS_JWT_SECRET: z.string().min(MIN_SECRET_CHARS, `must be at least ${MIN_SECRET_CHARS} characters`).optional(),
  PDS_ADMINS: csv,
  PDS_ADMIN_GROUPS: csv,
  PDS_READ_ONLY: bool,
  PDS_TRUST_PROXY: bool,
  PDS_OUTBOUND_ALLOW_PRIVATE: bool,
  PDS_WEBHOOK_BACKOFF_MS: z.coerce.number().int().min(10).max(3_600_000).default(10_000),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  PDS_DATABASE_URL: z
    .string()
    .refine(isPostgresUrl, 'must be a postgres:// or postgresql:// URL with a host, e.g. "postgres://pds:secret@db.example.com:5432/pds"')
    .optional(),
  PDS_AUTH_URL: url('https://auth.example.com').optional(),
  PDS_OIDC_AUDIENCE: z.string().optional(),
  PDS_OIDC_USER_CLAIM: z.enum(USER_CLAIMS).default('email'),
  PDS_OIDC_CLIENT_ID: z.string().optional(),
  PDS_OIDC_CLIENT_SECRET: z.string().optional(),
  PDS_GITHUB_OAUTH_CLIENT_ID: z.string().optional(),
  PDS_GITHUB_OAUTH_CLIENT_SECRET: z.string().optional(),
  PDS_GITHUB_OAUTH_URL: url('https://github.com').default('https://github.com'),
  PDS_GITHUB_API_URL: url('https://api.github.com').default('https://api.github.com'),
  PDS_GITHUB_APP_SLUG: z.string().default('pds-platform'),
  PDS_GITHUB_OIDC_ISSUER: url(GITHUB_ACTIONS_ISSUER).default(GITHUB_ACTIONS_ISSUER),
  PDS_DOMAIN: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a DNS domain, e.g. "apps.example.com"')
    .default('apps.localhost'),
  PDS_SANDBOX_STEP_MS: z.coerce.number().int().min(0).max(60_000).default(1500),
  PDS_SANDBOX_UNHEALTHY_TAGS: csv.pipe(z.array(z.string().regex(/^\d+\.\d+\.\d+$/, 'must be SemVer tags separated by commas, e.g. "1.3.0,1.4.2"'))),
  PDS_SANDBOX_PAUSE_SCALE: z.coerce.number().min(0).max(1).default(1),
  PDS_PROMETHEUS_URL: url('http://prometheus.monitoring:9090').optional(),
  PDS_SQLITE_BUSY_TIMEOUT_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  PDS_TOKEN: z.string().optional(),
  PDS_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  PDS_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  PDS_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters (a scraper\'s bearer token, e.g. "openssl rand -hex 24")').optional(),
  PDS_SHUTDOWN_S: z.coerce.number().min(0).max(600).default(20),
  PDS_ALLOWED_ORIGINS: csv.pipe(z.array(origin)),
  PDS_WORKFLOW_NAMESPACE: namespace.default('pds-workflows'),
  PDS_ARGOCD_NAMESPACE: namespace.default('argocd'),
  PDS_KUBE_TIMEOUT_S: z.coerce.number().positive('must be a positive number of seconds, e.g. "10"').max(600).default(10),
  PDS_REGISTRY: z
    .string()
    .regex(/^[a-z0-9.-]+(:[0-9]+)?(\/[a-z0-9._-]+)*$/, 'must be a registry host with an optional path, e.g. "registry.example.com/pds"')
    .default('registry.localhost/pds'),
  PDS_GITOPS_REPO: z.string().optional(),
  PDS_LOKI_URL: url('http://loki.monitoring:3100').optional(),
  PDS_GITHUB_APP_ID: z.string().regex(/^[0-9]+$/, 'must be the GitHub App\'s numeric id, e.g. "123456"').optional(),
  PDS_GITHUB_APP_PRIVATE_KEY: z.string().optional(),
  PDS_GITHUB_APP_PRIVATE_KEY_FILE: z.string().optional(),
  PDS_TOOLSETS: z
    .string()
    .default('all')
    .transform((spec, ctx) => {
      try {
        return parseToolsets(spec);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
});

/** The validated configuration. Durations in milliseconds where named `…Ms`. */
export interface Config {
  port: number;
  host: string;
  /** Public base URL without trailing slash; defaults to `http://localhost:<port>`. Also the self-issued JWT issuer. */
  baseUrl: string;
  /** Absolute directory for sandbox state and the generated JWT secret. */
  dataDir: string;
  backend: 'sandbox' | 'kubernetes';
  /** HS256 secret for self-issued tokens; `undefined` means "use or create the one kept in `dataDir`". */
  jwtSecret?: string;
  admins: string[];
  adminGroups: string[];
  readOnly: boolean;
  trustProxy: boolean;
  /**
   * `PDS_OUTBOUND_ALLOW_PRIVATE` (default false): let the fetches a caller can steer (Client ID Metadata Documents,
   * a client's `jwks_uri`, webhook deliveries) reach loopback, private and other non-public addresses
   * (`adapters/outbound/fetch.ts`), and webhooks use `http` (`adapters/webhooks/destination.ts`).
   */
  outboundAllowPrivate: boolean;
  /**
   * `PDS_WEBHOOK_BACKOFF_MS` (default 10,000): delay before a failed webhook delivery's first retry; it doubles after
   * each attempt, up to an hour, for 24 hours (`adapters/webhooks/dispatcher.ts`).
   */
  webhookBackoffMs: number;
  redisUrl?: string;
  /**
   * `PDS_DATABASE_URL`: the records (tenants, services, workflows, audit, registrations, claims) in this PostgreSQL
   * database, shared by every replica; unset, they are in SQLite at `<dataDir>/pds.db`.
   */
  databaseUrl?: string;
  /** External identity provider (Dex) base URL: JWKS at `{authUrl}/api/dex/keys`, issuer `{authUrl}/api/dex`. */
  authUrl?: string;
  oidcAudience?: string;
  /**
   * `PDS_OIDC_USER_CLAIM`: the external-token claim that is the user id (`email`, the default, and only when
   * `email_verified` is true; or `preferred_username`, or `sub`). No other claim stands in when it is missing.
   */
  oidcUserClaim: UserClaim;
  /**
   * Where people sign in when pds's OAuth authorization server sends them upstream (issue 12): the Dex of `authUrl`
   * (OIDC authorization code, client `PDS_OIDC_CLIENT_ID`, default `PDS_OIDC_AUDIENCE`, with
   * `PDS_OIDC_CLIENT_SECRET`) and/or a GitHub OAuth app (`PDS_GITHUB_OAUTH_CLIENT_ID`/`_SECRET` at
   * `PDS_GITHUB_OAUTH_URL`). Each is present only when fully configured.
   */
  signIn: {
    dex?: { clientId: string; clientSecret: string };
    github?: { clientId: string; clientSecret: string; url: string };
  };
  githubApiUrl: string;
  githubAppSlug: string;
  /**
   * `PDS_GITHUB_OIDC_ISSUER` (default `https://token.actions.githubusercontent.com`): the issuer of the GitHub Actions
   * ID tokens CI exchanges for pds tokens (`auth/oauth/token-exchange.ts`); its key set is read through the outbound
   * rule. Another value is for tests (a fake issuer) and GitHub Enterprise Server.
   */
  githubOidcIssuer: string;
  /** Service hosts are `<team>-<service>.<domain>`. */
  domain: string;
  /** Sandbox workflow step duration, milliseconds. */
  sandboxStepMs: number;
  /** `PDS_SQLITE_BUSY_TIMEOUT_MS`: how long a SQLite write waits for another process's write lock before 503 (default 5,000). */
  sqliteBusyTimeoutMs: number;
  /** Bearer token used by `pds mcp` (stdio). */
  token?: string;
  /** `PDS_LOG_LEVEL`: least severe level written (default `info`). */
  logLevel: LogLevel;
  /** `PDS_METRICS_PORT`: serve `GET /metrics` without a token on this port too (`rest/metrics.ts`). */
  metricsPort?: number;
  /** `PDS_METRICS_TOKEN`: serve `GET /metrics` on the main port to a scraper sending this bearer token. */
  metricsToken?: string;
  /**
   * `PDS_SHUTDOWN_S` (default 20, under Kubernetes' 30 s grace period): on SIGTERM, how long in-flight requests may
   * take to finish before their connections are closed, seconds.
   */
  shutdownSeconds: number;
  /**
   * `PDS_ALLOWED_ORIGINS`: browser origins (`https://app.example.com`) allowed to call `POST /mcp` besides the
   * origin of `baseUrl`; a request with any other `Origin` is refused with 403 (MCP "Streamable HTTP", DNS rebinding).
   */
  allowedOrigins: string[];
  /** `PDS_TOOLSETS`: the MCP toolsets clients may select (default every set; `tools/toolsets.ts`). */
  toolsets: Toolset[];
  /** `PDS_WORKFLOW_NAMESPACE` (default `pds-workflows`): where Workflows run; no tenant may take the name. */
  workflowNamespace: string;
  /** `PDS_ARGOCD_NAMESPACE` (default `argocd`): where Argo CD Applications live; no tenant may take the name. */
  argocdNamespace: string;
  /**
   * `PDS_KUBE_TIMEOUT_S` (default 10) × 1000: how long one Kubernetes API call, or a watch (re)connection until its
   * answer starts, may take before it fails as `Upstream` (kubernetes backend), milliseconds.
   */
  kubeTimeoutMs: number;
  /** `PDS_REGISTRY`: images are `<registry>/<team>/<service>:<tag>` (kubernetes backend). */
  registry: string;
  /** `PDS_GITOPS_REPO`: the GitOps repository the WorkflowTemplates write (shown in notes; the templates read their own copy). */
  gitopsRepo?: string;
  /** `PDS_LOKI_URL`: service logs from Loki `query_range` instead of the pods (kubernetes backend). */
  lokiUrl?: string;
  /**
   * `PDS_PROMETHEUS_URL`: canary and blue-green analysis asks this Prometheus for each service's error rate (sandbox:
   * through the outbound rule; Kubernetes: the AnalysisTemplate's provider address).
   */
  prometheusUrl?: string;
  /** `PDS_SANDBOX_UNHEALTHY_TAGS`: sandbox releases of these tags fail their analysis (issue 22). */
  sandboxUnhealthyTags: string[];
  /** `PDS_SANDBOX_PAUSE_SCALE` (0-1, default 1): sandbox rollout pauses last this fraction of what they say. */
  sandboxPauseScale: number;
  /**
   * The GitHub App (kubernetes backend): `PDS_GITHUB_APP_ID` with `PDS_GITHUB_APP_PRIVATE_KEY` (PEM) or
   * `PDS_GITHUB_APP_PRIVATE_KEY_FILE` (read at start-up); absent when not configured.
   */
  githubApp?: { appId: string; privateKey?: string; privateKeyFile?: string };
}

/**
 * Read and validate the configuration.
 * @param env the environment (defaults to `process.env`).
 * @throws Error listing every bad variable as `NAME: what is allowed`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = Env.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '' )));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const problems: string[] = [];
  const dexClientId = e.PDS_OIDC_CLIENT_ID ?? e.PDS_OIDC_AUDIENCE;
  if (e.PDS_OIDC_CLIENT_SECRET && !(e.PDS_AUTH_URL && dexClientId)) {
    problems.push('  PDS_OIDC_CLIENT_SECRET: set PDS_AUTH_URL and PDS_OIDC_CLIENT_ID (or PDS_OIDC_AUDIENCE) with it, or leave it unset');
  }
  if (Boolean(e.PDS_GITHUB_OAUTH_CLIENT_ID) !== Boolean(e.PDS_GITHUB_OAUTH_CLIENT_SECRET)) {
    problems.push('  PDS_GITHUB_OAUTH_CLIENT_ID, PDS_GITHUB_OAUTH_CLIENT_SECRET: set both (a GitHub OAuth app) or neither');
  }
  if (e.PDS_GITHUB_APP_ID && !(e.PDS_GITHUB_APP_PRIVATE_KEY || e.PDS_GITHUB_APP_PRIVATE_KEY_FILE)) {
    problems.push('  PDS_GITHUB_APP_PRIVATE_KEY, PDS_GITHUB_APP_PRIVATE_KEY_FILE: set one of them with PDS_GITHUB_APP_ID (the app\'s private key, PEM)');
  }
  if (problems.length) throw new Error(`invalid configuration:\n${problems.join('\n')}`);
  return {
    port: e.PORT,
    host: e.HOST,
    baseUrl: e.PDS_BASE_URL ?? `http://localhost:${e.PORT}`,
    dataDir: path.resolve(e.PDS_DATA_DIR),
    backend: e.PDS_BACKEND,
    jwtSecret: e.PDS_JWT_SECRET,
    admins: e.PDS_ADMINS,
    adminGroups: e.PDS_ADMIN_GROUPS,
    readOnly: e.PDS_READ_ONLY,
    trustProxy: e.PDS_TRUST_PROXY,
    outboundAllowPrivate: e.PDS_OUTBOUND_ALLOW_PRIVATE,
    webhookBackoffMs: e.PDS_WEBHOOK_BACKOFF_MS,
    redisUrl: e.REDIS_URL,
    databaseUrl: e.PDS_DATABASE_URL,
    authUrl: e.PDS_AUTH_URL,
    oidcAudience: e.PDS_OIDC_AUDIENCE,
    oidcUserClaim: e.PDS_OIDC_USER_CLAIM,
    signIn: {
      ...(e.PDS_AUTH_URL && dexClientId && e.PDS_OIDC_CLIENT_SECRET && { dex: { clientId: dexClientId, clientSecret: e.PDS_OIDC_CLIENT_SECRET } }),
      ...(e.PDS_GITHUB_OAUTH_CLIENT_ID &&
        e.PDS_GITHUB_OAUTH_CLIENT_SECRET && {
          github: { clientId: e.PDS_GITHUB_OAUTH_CLIENT_ID, clientSecret: e.PDS_GITHUB_OAUTH_CLIENT_SECRET, url: e.PDS_GITHUB_OAUTH_URL },
        }),
    },
    githubApiUrl: e.PDS_GITHUB_API_URL,
    githubAppSlug: e.PDS_GITHUB_APP_SLUG,
    githubOidcIssuer: e.PDS_GITHUB_OIDC_ISSUER,
    domain: e.PDS_DOMAIN,
    sandboxStepMs: e.PDS_SANDBOX_STEP_MS,
    sandboxUnhealthyTags: e.PDS_SANDBOX_UNHEALTHY_TAGS,
    sandboxPauseScale: e.PDS_SANDBOX_PAUSE_SCALE,
    prometheusUrl: e.PDS_PROMETHEUS_URL,
    sqliteBusyTimeoutMs: e.PDS_SQLITE_BUSY_TIMEOUT_MS,
    token: e.PDS_TOKEN,
    logLevel: e.PDS_LOG_LEVEL,
    metricsPort: e.PDS_METRICS_PORT,
    metricsToken: e.PDS_METRICS_TOKEN,
    shutdownSeconds: e.PDS_SHUTDOWN_S,
    allowedOrigins: e.PDS_ALLOWED_ORIGINS,
    toolsets: e.PDS_TOOLSETS,
    workflowNamespace: e.PDS_WORKFLOW_NAMESPACE,
    argocdNamespace: e.PDS_ARGOCD_NAMESPACE,
    kubeTimeoutMs: e.PDS_KUBE_TIMEOUT_S * 1000,
    registry: e.PDS_REGISTRY,
    gitopsRepo: e.PDS_GITOPS_REPO,
    lokiUrl: e.PDS_LOKI_URL,
    ...(e.PDS_GITHUB_APP_ID && {
      githubApp: { appId: e.PDS_GITHUB_APP_ID, privateKey: e.PDS_GITHUB_APP_PRIVATE_KEY, privateKeyFile: e.PDS_GITHUB_APP_PRIVATE_KEY_FILE },
    }),
  };
}
