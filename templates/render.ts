/**
 * Renders the template files in this folder with Mustache. The delimiters are `<% %>` instead of `{{ }}` because
 * GitHub Actions expressions (`${{ … }}`) must pass through untouched; nothing is HTML-escaped. Every value put
 * into a template is validated (names, paths, URLs) or built here, never free text from a caller.
 */
import { readFileSync } from 'node:fs';
import Mustache from 'mustache';
import { parse as parseYaml } from 'yaml';

const TAGS: [string, string] = ['<%', '%>'];
const cache = new Map<string, string>();

/** Text of a template file, relative to `templates/`, e.g. `dockerfiles/go.Dockerfile.tmpl`. */
export function templateSource(relativePath: string): string {
  let text = cache.get(relativePath);
  if (text === undefined) {
    text = readFileSync(new URL(relativePath, import.meta.url), 'utf8');
    cache.set(relativePath, text);
  }
  return text;
}

/**
 * Render one template file.
 * @param partials maps a partial name (`<%> name %>`) to a template path; standalone partials keep their indentation.
 */
export function renderFile(relativePath: string, view: object, partials: Record<string, string> = {}): string {
  const out = Mustache.render(templateSource(relativePath), view, (name) => (partials[name] ? templateSource(partials[name]) : undefined), {
    tags: TAGS,
    escape: (s: string) => s,
  });
  return tidy(out);
}

/** Trailing spaces off, at most one blank line in a row, no leading blank lines, one final newline. */
function tidy(text: string): string {
  return `${text
    .split('\n')
    .map((l) => l.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+/, '')
    .trimEnd()}\n`;
}

/** Render a workflow and make sure it is YAML (a template bug otherwise). */
export function renderWorkflow(relativePath: string, view: object, partials: Record<string, string>): string {
  const text = renderFile(relativePath, view, partials);
  parseYaml(text, { strict: true, uniqueKeys: true });
  return text;
}
