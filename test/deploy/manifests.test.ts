/**
 * The pds image and the cluster manifests agree with the application: every runtime folder is in the image, the user
 * is non-root, the probes hit endpoints that answer without a token, and the Deployment's environment is a valid
 * pds configuration.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { DockerfileParser } from 'dockerfile-ast';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const dockerfile = DockerfileParser.parse(readFileSync('Dockerfile', 'utf8'));
const instructions = dockerfile.getInstructions();
const stages = instructions.reduce<(typeof instructions)[]>((acc, i) => {
  if (i.getKeyword() === 'FROM') acc.push([]);
  acc.at(-1)?.push(i);
  return acc;
}, []);
const stageNamed = (name: string) => stages.find((s) => s[0]!.getArguments().at(-1)?.getValue() === name)!;
const finalStage = stages.at(-1)!;
const argsIn = (stage: typeof instructions, keyword: string) =>
  stage.filter((i) => i.getKeyword() === keyword).map((i) => i.getArguments().map((a) => a.getValue()));
const args = (keyword: string) => argsIn(finalStage, keyword);

const load = (file: string) => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS());
const docs = load('deploy/kubernetes/pds.yaml');
const deployment = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'pds');
const container = deployment.spec.template.spec.containers[0];
const clusterDocs = [...load('deploy/kubernetes/cluster/20-config.yaml'), ...load('deploy/kubernetes/cluster/30-pds.yaml')];
const clusterDeployment = clusterDocs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'pds');
const clusterContainer = clusterDeployment.spec.template.spec.containers[0];

describe('Dockerfile', () => {
  it('compiles every top-level source folder and file, and runs the compiled entry', () => {
    const build = stageNamed('build');
    const copied = new Set(argsIn(build, 'COPY').flatMap((a) => a.slice(0, -1)));
    expect(argsIn(build, 'RUN').map((a) => a.join(' '))).toContain('npm run build');
    expect(finalStage.filter((i) => i.getKeyword() === 'COPY').map((i) => i.getTextContent())).toContain(
      'COPY --from=build /app/dist ./dist',
    );
    const cmd = JSON.parse(finalStage.filter((i) => i.getKeyword() === 'CMD').at(-1)!.getArgumentsContent()!) as string[];
    const entry = cmd.find((w) => w.startsWith('dist/'))!;
    expect(entry).toBe('dist/bin/main.js');
    expect(statSync(entry.replace(/^dist\//, '').replace(/\.js$/, '.ts')).isFile()).toBe(true);
    const runtime = readdirSync('.').filter((entry) => {
      if (['test', 'bench', 'node_modules', 'deploy'].includes(entry) || entry.startsWith('.')) return false;
      if (entry.endsWith('.ts')) return !entry.endsWith('.config.ts');
      return statSync(entry).isDirectory() && readdirSync(entry, { recursive: true }).some((f) => String(f).endsWith('.ts'));
    });
    expect(runtime.length).toBeGreaterThan(5);
    // `COPY . .` copies the whole build context (test/artifact/ builds from it as .dockerignore filters it).
    for (const entry of runtime) expect(copied.has('.') || copied.has(entry), entry).toBe(true);
  });

  it('runs as a non-root user under tini, with the health check on /healthz', () => {
    const user = args('USER').at(-1)![0]!;
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(String(deployment.spec.template.spec.securityContext.runAsUser)).toBe(user.split(':')[0]);
    expect(args('ENTRYPOINT').at(-1)!.join(' ')).toContain('tini');
    expect(args('CMD').at(-1)!.join(' ')).toContain('serve');
    const healthcheck = finalStage.filter((i) => i.getKeyword() === 'HEALTHCHECK').at(-1)!.getTextContent();
    for (const flag of ['--interval=30s', '--timeout=5s', '--start-period=15s', '--retries=3']) expect(healthcheck).toContain(flag);
    expect(healthcheck).toContain('/healthz');
  });
});

describe('Kubernetes manifests', () => {
  let pds: TestServer;
  beforeAll(async () => {
    pds = await startTestServer();
  });
  afterAll(() => pds.stop());

  it('probes endpoints that answer 200 without a token', async () => {
    for (const probe of [container.readinessProbe, container.livenessProbe]) {
      expect(probe.httpGet.port).toBe(container.ports[0].name);
      const res = await fetch(pds.url + probe.httpGet.path);
      expect(res.status, probe.httpGet.path).toBe(200);
    }
  });

  it('sets an environment that is a valid pds configuration on the container port', () => {
    const env = Object.fromEntries(
      container.env.map((e: any) => [e.name, e.value ?? 'x'.repeat(48)]),
    ) as Record<string, string>;
    const config = loadConfig(env);
    expect(config.port).toBe(container.ports[0].containerPort);
    expect(config.backend).toBe('sandbox');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    const mounts = container.volumeMounts.map((m: any) => m.mountPath);
    expect(mounts).toContain(config.dataDir);
  });

  it('leaves the drain its time: preStop pause + PDS_SHUTDOWN_S fit the grace period; metrics on their own port', () => {
    const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? 'x'.repeat(48)])) as Record<string, string>;
    const config = loadConfig(env);
    const pause = Number(container.lifecycle.preStop.exec.command.at(-1));
    expect(pause).toBeGreaterThan(0);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(pause + config.shutdownSeconds);
    const metricsPort = container.ports.find((p: any) => p.name === 'metrics').containerPort;
    expect(config.metricsPort).toBe(metricsPort);
    const service = docs.find((d) => d.kind === 'Service' && d.metadata.name === 'pds');
    expect(service.spec.ports.map((p: any) => p.targetPort)).toContain('metrics');
  });
});

describe('Kubernetes manifests of the kubernetes backend (deploy/kubernetes/cluster/)', () => {
  it('runs two replicas under the pds ServiceAccount with a valid kubernetes-backend configuration', () => {
    const configMap = clusterDocs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === clusterContainer.envFrom[0].configMapRef.name);
    // What a platform team puts in the Secret pds (deploy/README.md).
    const secret: Record<string, string> = { PDS_JWT_SECRET: 'x'.repeat(48), PDS_DATABASE_URL: 'postgres://pds@db:5432/pds', REDIS_URL: 'redis://redis:6379' };
    const env = {
      ...configMap.data,
      ...Object.fromEntries(clusterContainer.env.map((e: any) => [e.name, e.value ?? secret[e.valueFrom?.secretKeyRef?.key] ?? 'from-the-pod'])),
    } as Record<string, string>;
    const config = loadConfig(env);
    expect(config.backend).toBe('kubernetes');
    expect(config.port).toBe(clusterContainer.ports[0].containerPort);
    expect(clusterDeployment.spec.replicas).toBe(2);
    expect(clusterDeployment.spec.template.spec.serviceAccountName).toBe('pds');
    const fromSecrets = clusterContainer.env.filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.name);
    expect(fromSecrets.sort()).toEqual(['PDS_DATABASE_URL', 'PDS_JWT_SECRET', 'REDIS_URL']);
    const keyFile = env.PDS_GITHUB_APP_PRIVATE_KEY_FILE!;
    expect(clusterContainer.volumeMounts.some((m: any) => keyFile.startsWith(`${m.mountPath}/`))).toBe(true);
  });

  it('probes the same token-free endpoints as the sandbox manifest', () => {
    expect(clusterContainer.readinessProbe.httpGet).toEqual(container.readinessProbe.httpGet);
    expect(clusterContainer.livenessProbe.httpGet).toEqual(container.livenessProbe.httpGet);
  });
});
