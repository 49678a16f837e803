#!/usr/bin/env node
// `npm run -s inspector -- <MCP URL or -- command…> --method …`: the MCP Inspector CLI from this repository, offline.
//
// It runs the pinned devDependency @modelcontextprotocol/inspector-cli (0.17.2, the last release that runs on Node 20)
// in CLI mode. That release finds its own package.json by testing `../package.json` against the *working directory*
// and then importing it relative to itself, so it fails ("Cannot find module …/node_modules/@modelcontextprotocol/
// package.json") from anywhere but its build directory: it is started there. Relative paths of an existing file after
// `--` (the stdio command, e.g. `bin/pds.js`) are made absolute first, so they still name the caller's files.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const build = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build');
const args = process.argv.slice(2);
const separator = args.indexOf('--');
const resolved = args.map((arg, i) => (separator >= 0 && i > separator && !path.isAbsolute(arg) && existsSync(arg) ? path.resolve(arg) : arg));
const child = spawn(process.execPath, [path.join(build, 'cli.js'), '--cli', ...resolved], { cwd: build, stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
