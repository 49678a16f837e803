/** The kubernetes backend's configuration (config.ts) and its start-up refusals (server.ts buildPlatform). */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { buildPlatform } from '../../server.js';

describe('kubernetes backend configuration', () => {
  it('reads the registry, Loki, the GitOps repository and the GitHub App', () => {
    const c = loadConfig({
      PDS_BACKEND: 'kubernetes',
      PDS_REGISTRY: 'registry.example.com:5000/pds',
      PDS_LOKI_URL: 'http://loki.monitoring:3100/',
      PDS_GITOPS_REPO: 'https://github.com/example/gitops.git',
      PDS_GITHUB_APP_ID: '123456',
      PDS_GITHUB_APP_PRIVATE_KEY_FILE: '/var/run/pds/github-app/private-key.pem',
    });
    expect(c).toMatchObject({
      backend: 'kubernetes',
      registry: 'registry.example.com:5000/pds',
      lokiUrl: 'http://loki.monitoring:3100',
      gitopsRepo: 'https://github.com/example/gitops.git',
      githubApp: { appId: '123456', privateKeyFile: '/var/run/pds/github-app/private-key.pem' },
    });
    expect(loadConfig({}).registry).toBe('registry.localhost/pds');
    expect(loadConfig({}).githubApp).toBeUndefined();
  });

  it('refuses a GitHub App without its key, a registry with a scheme and a Loki URL that is not one', () => {
    expect(() => loadConfig({ PDS_GITHUB_APP_ID: '123456' })).toThrow(/PDS_GITHUB_APP_PRIVATE_KEY, PDS_GITHUB_APP_PRIVATE_KEY_FILE: set one of them/);
    expect(() => loadConfig({ PDS_GITHUB_APP_ID: 'my-app', PDS_GITHUB_APP_PRIVATE_KEY: 'x' })).toThrow(/PDS_GITHUB_APP_ID: must be the GitHub App's numeric id/);
    expect(() => loadConfig({ PDS_REGISTRY: 'https://registry.example.com' })).toThrow(/PDS_REGISTRY: must be a registry host/);
    expect(() => loadConfig({ PDS_LOKI_URL: 'loki' })).toThrow(/PDS_LOKI_URL: must be an absolute URL/);
  });

  it('bounds Kubernetes calls by PDS_KUBE_TIMEOUT_S (default 10 s) and refuses a bound that is not a positive number', () => {
    expect(loadConfig({}).kubeTimeoutMs).toBe(10_000);
    expect(loadConfig({ PDS_KUBE_TIMEOUT_S: '2.5' }).kubeTimeoutMs).toBe(2_500);
    expect(() => loadConfig({ PDS_KUBE_TIMEOUT_S: '0' })).toThrow(/PDS_KUBE_TIMEOUT_S: must be a positive number of seconds/);
    expect(() => loadConfig({ PDS_KUBE_TIMEOUT_S: 'soon' })).toThrow(/PDS_KUBE_TIMEOUT_S/);
  });

  it('refuses to start PDS_BACKEND=kubernetes without PDS_DATABASE_URL, before touching any cluster', async () => {
    const config = loadConfig({ PDS_BACKEND: 'kubernetes', KUBECONFIG: '/nonexistent' });
    await expect(buildPlatform(config)).rejects.toThrow(/set PDS_DATABASE_URL/);
  });
});
