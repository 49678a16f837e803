/**
 * Builds the MCP App views (issue 21 item 4) into the dist folder beside this file (built output, not committed): one self-contained HTML file per view
 * (`workflow.html`, `service.html`), its script (Vite: Preact and `@modelcontextprotocol/ext-apps`, one IIFE) and
 * styles inlined, with a Content-Security-Policy that lets it load and connect to nothing — everything it reads comes
 * through its host. pds serves them as `ui://pds/workflow` and `ui://pds/service` (`tools/mcp-apps.ts`).
 *
 * Run by `npm run build` (`bin/build.js`) and by the tests that read the views (`test/helpers/mcp-apps.ts`):
 * `node --import tsx console/mcp-apps/build.ts`.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, type Rolldown } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
/** Where the built views go (`tools/mcp-apps.ts` reads them there, or from the copy under `dist/`). */
export const outDir = `${here}dist/`;
/** The views and their titles; `<body data-view>` tells the script which to render. */
export const VIEWS = { workflow: 'pds workflow', service: 'pds service' } as const;

/**
 * The page's own policy: inline script and style only (that is how the view ships), images only as data, no
 * connection, frame, form or base. The host adds its own (the spec's restrictive default, since the resource declares
 * no domain); this one holds even in a host that does not.
 */
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'";

/** Text safe inside a `<script>` or `<style>` element: no `</` that could end it, no `<!--` that could change parsing. */
function inlineSafe(text: string): string {
  return text.replace(/<\/(script|style)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** The HTML of one view. */
function page(view: keyof typeof VIEWS, script: string, style: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${VIEWS[view]}</title>`,
    `<style>${inlineSafe(style)}</style>`,
    '</head>',
    `<body data-view="${view}">`,
    '<div id="root"></div>',
    `<script>${inlineSafe(script)}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Build the views; returns the files written. */
export async function buildViews(): Promise<string[]> {
  const output = (await build({
    configFile: false,
    root: here,
    logLevel: 'warn',
    mode: 'production',
    define: { 'process.env.NODE_ENV': '"production"' },
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      lib: { entry: `${here}src/main.tsx`, formats: ['iife'], name: 'pdsView', fileName: () => 'view.js' },
    },
  })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
  const outputs = Array.isArray(output) ? output : [output];
  const chunk = outputs.flatMap((o) => o.output).find((o): o is Rolldown.OutputChunk => o.type === 'chunk' && o.isEntry);
  if (!chunk) throw new Error('the views build produced no script');
  const style = readFileSync(`${here}src/style.css`, 'utf8');
  mkdirSync(outDir, { recursive: true });
  return Object.keys(VIEWS).map((view) => {
    const file = `${outDir}${view}.html`;
    // Whole or not at all: a pds reading the view while a second build runs (parallel test files) never sees half.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, page(view as keyof typeof VIEWS, chunk.code, style));
    renameSync(partial, file);
    return file;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildViews().then(
    (files) => process.stderr.write(`mcp-apps: built ${files.map((f) => f.slice(here.length)).join(', ')}\n`),
    (err) => {
      process.stderr.write(`mcp-apps: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
