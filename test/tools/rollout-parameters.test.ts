/**
 * The rollout parameters at the door (issue 22 item 1): `strategy` and `canary_steps` beside the parameters of `docs/api.md` of
 * deploy-service, on onboard and update-config only; canary steps validated and normalized; update-config takes
 * env_vars, strategy or both.
 */
import { describe, expect, it } from 'vitest';
import { deployService } from '../../core/operations/service-operations.js';
import { CanaryStepsParam, formatCanarySteps, parseCanarySteps } from '../../core/rollouts.js';

const target = { team_name: 'acme', component_name: 'web' };
const problems = (input: object) => {
  const parsed = deployService.parameters.safeParse(input);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('canary_steps', () => {
  it('reads weights and pauses, and normalizes the text', () => {
    expect(parseCanarySteps('10%:2m,50%:5m')).toEqual([{ weight: 10, pauseSeconds: 120 }, { weight: 50, pauseSeconds: 300 }]);
    expect(CanaryStepsParam.parse(' 5%:90s , 25%:1h,75%:60s')).toBe('5%:90s,25%:1h,75%:1m');
    expect(formatCanarySteps([{ weight: 20, pauseSeconds: 0 }])).toBe('20%:0s');
  });

  it.each([
    ['50%:2m,10%:1m', /weights must rise/],
    ['100%:1m', /weight 1-99/],
    ['10%', /<weight>%:<pause>/],
    ['10%:2d', /<weight>%:<pause>/],
    ['10%:25h', /at most 24h/],
    [Array.from({ length: 11 }, (_, i) => `${i + 1}%:1m`).join(','), /at most 10 steps/],
  ])('refuses %s naming what is allowed', (text, message) => {
    const parsed = CanaryStepsParam.safeParse(text);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.message).join()).toMatch(message);
  });
});

describe('deploy-service with a strategy', () => {
  it('takes strategy and canary_steps at onboarding and through update-config, not on deploy', () => {
    const onboard = { ...target, action: 'onboard', git_tag: '0.1.0', dockerfile_repo: 'acme/web', port: '8080' };
    expect(problems({ ...onboard, strategy: 'canary', canary_steps: '10%:2m' })).toEqual([]);
    expect(problems({ ...onboard, strategy: 'blue-green' })).toEqual([]);
    expect(problems({ ...target, action: 'update-config', strategy: 'canary' })).toEqual([]);
    expect(problems({ ...target, action: 'update-config', env_vars: 'A=1', strategy: 'rolling' })).toEqual([]);
    expect(problems({ ...target, action: 'deploy', git_tag: '0.2.0', dockerfile_repo: 'acme/web', strategy: 'canary' })).toEqual([
      'strategy: is not used by action=deploy; it applies to action=update-config or onboard',
    ]);
  });

  it('refuses an update-config with neither env_vars nor strategy, canary_steps without canary, an unknown strategy', () => {
    expect(problems({ ...target, action: 'update-config' })).toEqual(['env_vars: is required for action=update-config unless strategy is given']);
    expect(problems({ ...target, action: 'update-config', strategy: 'blue-green', canary_steps: '10%:1m' })).toEqual([
      'canary_steps: needs strategy="canary" in the same call',
    ]);
    expect(problems({ ...target, action: 'update-config', strategy: 'linear' }).join()).toMatch(/strategy: .*"rolling"/);
  });
});
