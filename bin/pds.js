#!/usr/bin/env node
// The `pds` command from the sources: loads the TypeScript through tsx, so a fresh clone runs with `npm ci` and
// nothing else. The built image runs the compiled `dist/bin/main.js` instead (npm run build).
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
