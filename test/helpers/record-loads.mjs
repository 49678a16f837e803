// Records the URL of every module the process resolves through the ESM loader (static imports, dynamic import(), and
// the entry of each CommonJS package imported from ESM), one per line, into the file named by PDS_RECORD_LOADS.
// Start a process with `--import ./test/helpers/record-loads.mjs` (or NODE_OPTIONS) to see what it loaded; the hooks
// run off the main thread (module.register), which is why they append to a file instead of keeping a list.
import { register } from 'node:module';

if (process.env.PDS_RECORD_LOADS) {
  register('./record-loads-hooks.mjs', import.meta.url, { data: { file: process.env.PDS_RECORD_LOADS } });
}
