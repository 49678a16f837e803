/**
 * Renders the template files in this folder with Mustache. The delimiters are `<% %>` instead of `{{ }}` because
 * GitHub Actions expressions (`${{ … }}`) must pass through untouched; nothing is HTML-escaped.
 *
 * Untrusted text never becomes Dockerfile, shell or YAML syntax (issue 17 item 4):
 * - every value a template renders is refused when it holds a line break or control character (a line break would
 *   start a new Dockerfile instruction or YAML line), and values from a repository are held to their grammar first
 *   (templates/inspect/grammar.ts);
 * - commands are exec form, each argument JSON-quoted ({@link execForm}); where a shell is needed for `${PORT:-…}`,
 *   the repository's values are its positional arguments, not its text;
 * - a workflow's untrusted values are YAML nodes set through the `yaml` document API ({@link renderWorkflow}).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Mustache from 'mustache';
import { Document, isNode, isScalar, parseDocument, visit } from 'yaml';
import { InvalidParams } from '../core/errors.js';

const TAGS: [string, string] = ['<%', '%>'];
const cache = new Map<string, string>();
// C0 and C1 controls and the Unicode line separators: none belongs inside one line of a generated file.
const LINE_BREAKING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

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
 * A Dockerfile exec-form argument list: a JSON array with one JSON string per argument, spaced as the templates
 * write it, e.g. `["node", "src/server.js"]`.
 */
export function execForm(args: readonly string[]): string {
  return `[${args.map((a) => JSON.stringify(a)).join(', ')}]`;
}

/** What a template may print: any value that stays on its line. @throws InvalidParams for a line break or control character. */
function onOneLine(value: unknown): string {
  const text = String(value);
  if (LINE_BREAKING.test(text)) throw new InvalidParams(`${JSON.stringify(text)} cannot be written into a generated file: it holds a line break or control character`);
  return text;
}

/**
 * Render one template file.
 * @param partials maps a partial name (`<%> name %>`) to a template path; standalone partials keep their indentation.
 * @throws InvalidParams when a value holds a line break or control character.
 */
export function renderFile(relativePath: string, view: object, partials: Record<string, string> = {}): string {
  const out = Mustache.render(templateSource(relativePath), view, (name) => (partials[name] ? templateSource(partials[name]) : undefined), {
    tags: TAGS,
    escape: onOneLine,
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

/**
 * Render a workflow: the template is the fixed skeleton, and each of `values` is set as a YAML node through the
 * `yaml` document API, never spliced into text. In the template a value's tag (`<%name%>`) must stand for a whole
 * scalar (e.g. `PDS_TEAM: <%team%>` or `FOO: "<%name%>"`, whose quoting it keeps), or sit in the header comment.
 * @param values untrusted text by view key, e.g. `{ team: 'acme', baseUrl: 'https://pds.example.com' }`; may span lines.
 * @throws Error when the template places a value inside a larger scalar (a template bug); when the skeleton is not YAML.
 */
export function renderWorkflow(relativePath: string, view: object, partials: Record<string, string>, values: Record<string, string> = {}): string {
  // A placeholder nobody can guess, so a value cannot pose as another value's placeholder.
  const nonce = randomBytes(8).toString('hex');
  const byPlaceholder = new Map(Object.entries(values).map(([key, value]) => [`pds-value-${key}-${nonce}`, value]));
  const placeholders = Object.fromEntries(Object.keys(values).map((key) => [key, `pds-value-${key}-${nonce}`]));
  const doc = parseDocument(renderFile(relativePath, { ...view, ...placeholders }, partials), { strict: true, uniqueKeys: true });
  if (doc.errors.length) throw doc.errors[0];
  // A value in a comment (the header names the component) stays one comment line.
  const inComment = (comment: string) => comment.replace(/pds-value-[\w-]+/g, (p) => (byPlaceholder.get(p) ?? p).replace(/\s+/g, ' '));
  const withComments = (node: { commentBefore?: string | null; comment?: string | null }) => {
    if (node.commentBefore) node.commentBefore = inComment(node.commentBefore);
    if (node.comment) node.comment = inComment(node.comment);
  };
  withComments(doc);
  visit(doc, (_, node) => {
    if (!isNode(node)) return;
    withComments(node);
    if (!isScalar(node) || typeof node.value !== 'string') return;
    const value = byPlaceholder.get(node.value);
    if (value === undefined) return;
    node.value = value;
    if (value.includes('\n')) node.type = 'BLOCK_LITERAL';
  });
  const text = doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  if (text.includes(`-${nonce}`)) throw new Error(`${relativePath}: a value's tag is inside a larger text; it must be a whole YAML value`);
  return text;
}

/**
 * `.github/dependabot.yml` (version 2, https://docs.github.com/en/code-security/dependabot/working-with-dependabot/dependabot-options-reference):
 * weekly updates of the `github-actions` used by the CI workflow and of the `docker` base images in the root
 * Dockerfile, each ecosystem's bumps grouped into one pull request. Built as a `yaml` document; it holds no
 * repository or caller value.
 */
export function renderDependabot(): string {
  const ecosystem = (name: string, what: string) => ({
    'package-ecosystem': name,
    directory: '/',
    schedule: { interval: 'weekly' },
    groups: { [name]: { patterns: ['*'] } },
    'commit-message': { prefix: what },
  });
  const doc = new Document({ version: 2, updates: [ecosystem('github-actions', 'ci'), ecosystem('docker', 'build')] });
  doc.commentBefore =
    ' Dependabot, scaffolded by pds: keeps the pinned GitHub Actions in .github/workflows/ and the base images in the\n' +
    ' Dockerfile current, with one grouped pull request per ecosystem each week.';
  return doc.toString({ lineWidth: 0 });
}
