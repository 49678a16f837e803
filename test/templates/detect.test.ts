/** Detection by repository content (`docs/api.md#scaffolding-templates`), including none and several. */
import { describe, expect, it } from 'vitest';
import { detectTemplate, type TemplateId } from '../../templates/index.js';

const pkg = (o: object) => JSON.stringify(o);

describe('detectTemplate', () => {
  it.each<[string[], TemplateId]>([
    [['package.json'], 'javascript'],
    [['server.js'], 'javascript'],
    [['index.js', 'lib/a.js'], 'javascript'],
    [['pyproject.toml'], 'python'],
    [['requirements.txt', 'main.py'], 'python'],
    [['go.mod', 'main.go'], 'go'],
    [['dist/index.html'], 'static'],
    [['./dist/index.html', 'dist/assets/a.js'], 'static'],
  ])('%j → %s', (paths, template) => {
    expect(detectTemplate({ paths }).template).toBe(template);
  });

  it('looks at the repository root only', () => {
    expect(() => detectTemplate({ paths: ['services/api/package.json', 'web/dist/index.html'] })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
  });

  it('a dist/ without index.html is not SPA output (compiled server code)', () => {
    const d = detectTemplate({ paths: ['package.json', 'dist/index.js'] });
    expect(d.template).toBe('javascript');
    expect(d.candidates.map((c) => c.template)).toEqual(['javascript']);
  });

  it('no template fits: INVALID_PARAMS naming the signals and template=', () => {
    let err: unknown;
    try {
      detectTemplate({ paths: ['README.md', 'Makefile'] });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'INVALID_PARAMS' });
    expect((err as Error).message).toMatch(/^No template fits this repository/);
    expect((err as Error).message).toContain('template=<javascript|python|go|static>');
  });

  it('several fit: INVALID_PARAMS listing them, and template= resolves it', () => {
    const paths = ['go.mod', 'package.json', 'requirements.txt'];
    expect(() => detectTemplate({ paths })).toThrow(
      expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining('Pass template=<javascript|python|go> to choose one') }),
    );
    const d = detectTemplate({ paths }, 'go');
    expect(d.template).toBe('go');
    expect(d.candidates.map((c) => c.template)).toEqual(['javascript', 'python', 'go']);
    expect(d.reason).toMatch(/^chosen by the caller/);
  });

  describe('JavaScript repository that is also a single-page app', () => {
    it('package.json + committed dist/index.html, no server → static', () => {
      const d = detectTemplate({ paths: ['package.json', 'dist/index.html'], contents: { 'package.json': pkg({ scripts: { build: 'vite build' }, devDependencies: { vite: '5' } }) } });
      expect(d.template).toBe('static');
      expect(d.candidates.map((c) => c.template)).toEqual(['javascript', 'static']);
    });
    it('vite app without committed output → static (built in the image)', () => {
      const d = detectTemplate({ paths: ['package.json', 'index.html'], contents: { 'package.json': pkg({ scripts: { build: 'vite build' }, devDependencies: { vite: '5' } }) } });
      expect(d.template).toBe('static');
    });
    it('an express server that also serves dist/ → javascript', () => {
      const d = detectTemplate({ paths: ['package.json', 'server.js', 'dist/index.html'], contents: { 'package.json': pkg({ scripts: { start: 'node server.js' }, dependencies: { express: '4' } }) } });
      expect(d.template).toBe('javascript');
      expect(d.reason).toContain('template=static');
    });
    it('the caller can choose either', () => {
      const repo = { paths: ['package.json', 'dist/index.html'] };
      expect(detectTemplate(repo).template).toBe('static');
      expect(detectTemplate(repo, 'javascript').template).toBe('javascript');
    });
  });

  it('invalid package.json is INVALID_PARAMS, not a crash', () => {
    expect(() => detectTemplate({ paths: ['package.json'], contents: { 'package.json': '{nope' } })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
  });
});
