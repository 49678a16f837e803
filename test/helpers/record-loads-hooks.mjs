// The loader hooks of test/helpers/record-loads.mjs: append each resolved URL to the file given at registration.
import { appendFileSync } from 'node:fs';

let file;

/** @param {{ file: string }} data */
export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
