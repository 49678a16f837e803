#!/usr/bin/env node
// Part of `npm run build`: tsc compiles the TypeScript to dist/; the scaffolding template files are read at run time
// next to their module (templates/render.ts), so they are copied beside the compiled code.
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
cpSync(`${root}templates`, `${root}dist/templates`, {
  recursive: true,
  filter: (source) => !source.endsWith('.ts'),
});
