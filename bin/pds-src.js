#!/usr/bin/env node
// The `pds` command straight from the TypeScript sources, through tsx: what the tests spawn, so they run the code as it
// is in the checkout without a build. People and the image run the compiled tree (bin/pds.js, dist/bin/main.js).
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
