/**
 * Issue 13 §1: the log of the whole test run holds no secret. Runs in the `log-scan` project, after every other project
 * (vitest.config.ts, `sequence.groupOrder`), over the files every test pds wrote (`test/helpers/run-log.ts`): at
 * `trace`, through the production logger, from every suite that starts pds — tokens of every form, confirmations,
 * `update-config` env values, OAuth sign-ins and failures among them.
 */
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { expect, inject, it } from 'vitest';
import { findSecrets } from '../helpers/secrets.js';
import '../helpers/run-log.js';

it('finds no token, Authorization value, confirm value or env value in the run\'s log', (ctx) => {
  const dir = inject('runLogDir');
  const files = readdirSync(dir).filter((f) => f.endsWith('.log'));
  const lines = files.flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((line) => ({ file: f, line })));
  // Run alone (no other suite in this run), there is nothing to scan.
  if (lines.length === 0) ctx.skip('the run wrote no log: run the whole suite (npm test) to scan it');
  const findings = files.flatMap((f) => findSecrets(readFileSync(path.join(dir, f), 'utf8')).map((x) => `${f}:${x.line}: ${x.what}: ${x.excerpt}`));
  expect(findings, `secrets in the run's log (kept in ${dir})`).toEqual([]);
  expect(lines.some(({ line }) => line.includes('"reqId"'))).toBe(true); // request lines were written and scanned
  rmSync(dir, { recursive: true, force: true });
});
