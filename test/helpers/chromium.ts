/**
 * A real browser for the console's journeys (issue 21 item 5): Debian's chromium (`.ci/run` installs it) driven by
 * playwright-core, one browser per test file. Also axe-core run in the page, CSP violations caught from the console,
 * and screenshots for the README.
 */
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** `PDS_CHROMIUM`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM = process.env.PDS_CHROMIUM ?? '/usr/bin/chromium';

/** Start chromium headless; `--no-sandbox` only as root, where its sandbox cannot start. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    timeout: 60_000,
  });
}

/**
 * Every message the page's console reports about a Content-Security-Policy violation (the console must run under its
 * CSP without any): collect from the page's creation on.
 */
export function cspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to (execute|load|apply|connect)/i.test(message.text())) seen.push(message.text());
  });
  return seen;
}

let axeSource: Promise<string> | undefined;

/** One axe-core violation, as the test reports it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Run axe-core (WCAG 2 A and AA rules and best practices) on the page as it is now and return the serious and
 * critical violations. axe is evaluated through the DevTools protocol, which the page's CSP does not govern, so the
 * CSP under test stays as it is.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(await axeSource);
  const violations = await page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  }, ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

const docs = fileURLToPath(new URL('../../docs/console/', import.meta.url));
let shots: Promise<string> | undefined;

/**
 * Take a screenshot of the page as `name`.png: into `docs/console/` (the README's images) when
 * `PDS_UPDATE_SCREENSHOTS=1`, else into a temporary directory, so a test run leaves the checkout as it was.
 * @returns the file written.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = process.env.PDS_UPDATE_SCREENSHOTS === '1' ? docs : await (shots ??= mkdtemp(path.join(tmpdir(), 'pds-console-shots-')));
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: file, animations: 'disabled' });
  return file;
}
