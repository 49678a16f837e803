/**
 * The pds image without Docker: reads the repository's `Dockerfile` with dockerfile-ast and carries out each stage on
 * the local disk, so the files a test runs are laid out as the image lays them out, from the same instructions
 * (issue 18 item 2). No Docker engine runs in CI, so this is as close to the image as the suite can get:
 *
 * - `COPY` from the build context copies what `.dockerignore` lets through (matched with `@balena/dockerignore`, the
 *   rules Docker applies); `COPY --from=<stage>` copies from that stage's directory.
 * - `RUN npm run build` runs it; `RUN npm ci` links the checkout's installed packages instead of installing them
 *   again (with `--omit=dev`, only the production packages package-lock.json lists), so a compiled file that imports a
 *   devDependency fails here as it would in the image.
 * - `RUN apk add` records the packages (see {@link ImageLayout.apkPackages}); `RUN mkdir`/`chown` of the data
 *   directory stands for nothing: the test gives `PDS_DATA_DIR` a temporary directory of its own.
 * - Any other `RUN` throws, naming it, so a new Dockerfile step cannot pass here unnoticed.
 *
 * Every path inside the image is the stage's `WORKDIR` mapped onto a directory of `root`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';

// A CommonJS module whose typings declare a default export it does not have: load it as CommonJS.
const ignore = createRequire(import.meta.url)('@balena/dockerignore') as typeof import('@balena/dockerignore').default;

/** One `FROM … [AS name]` and the instructions up to the next. */
export interface Stage {
  /** The `AS` name, or the stage's index as text. */
  name: string;
  /** The base image, e.g. `node:24-alpine`. */
  from: string;
  instructions: Instruction[];
}

/** What the final stage is, carried out under a directory. */
export interface ImageLayout {
  /** The final stage's `WORKDIR` (e.g. `/app`) on the local disk. */
  workdir: string;
  /** The final stage's `ENV`, e.g. `{ NODE_ENV: 'production', PORT: '8080', PDS_DATA_DIR: '/data' }`. */
  env: Record<string, string>;
  /** `ENTRYPOINT` in exec form, e.g. `["/sbin/tini", "--"]`. */
  entrypoint: string[];
  /** `CMD` in exec form, e.g. `["node", "--max-semi-space-size=6", "dist/bin/main.js", "serve"]`. */
  cmd: string[];
  /** The `HEALTHCHECK … CMD` in exec form. */
  healthcheck: string[];
  /** The base image of the final stage, e.g. `node:24-alpine`. */
  base: string;
  /** Packages the final stage adds with `apk add`, e.g. `["tini"]`. */
  apkPackages: string[];
}

/** The Dockerfile's stages in order. */
export function stagesOf(dockerfile: string): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of DockerfileParser.parse(dockerfile).getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const args = instruction.getArguments().map((a) => a.getValue());
      const as = args.findIndex((a) => a.toUpperCase() === 'AS');
      stages.push({ name: as >= 0 ? args[as + 1]! : String(stages.length), from: args[0]!, instructions: [] });
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** An instruction's arguments in exec form: the JSON array it was written as, else its words. */
export function execForm(instruction: Instruction): string[] {
  const content = instruction.getArgumentsContent() ?? '';
  if (content.trimStart().startsWith('[')) return JSON.parse(content) as string[];
  return instruction.getArguments().map((a) => a.getValue());
}

/** Files of `context` that `.dockerignore` lets into the build context, as relative paths. */
function contextFiles(context: string): string[] {
  const rules = existsSync(path.join(context, '.dockerignore')) ? readFileSync(path.join(context, '.dockerignore'), 'utf8') : '';
  const ig = ignore().add(rules);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(context, dir))) {
      const rel = dir ? `${dir}/${name}` : name;
      if (ig.ignores(rel)) continue;
      if (statSync(path.join(context, rel)).isDirectory()) walk(rel);
      else out.push(rel);
    }
  };
  walk('');
  return out;
}

/** Top-level packages `npm ci --omit=dev` installs: package-lock.json's entries not marked `dev`. */
function productionPackages(context: string): string[] {
  const lock = JSON.parse(readFileSync(path.join(context, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([key, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) && !entry.dev)
    .map(([key]) => key.slice('node_modules/'.length));
}

/**
 * Carry out the Dockerfile's stages under `root` (one directory per stage) and describe the final one.
 * @param context the build context: the repository's root, with its installed `node_modules`.
 * @throws Error naming an instruction this emulation does not know, or a failed `RUN npm run build`.
 */
export function layOutImage(context: string, root: string): ImageLayout {
  const stages = stagesOf(readFileSync(path.join(context, 'Dockerfile'), 'utf8'));
  const stageDir = (stage: Stage) => path.join(root, `stage-${stage.name}`);
  const final = stages.at(-1)!;
  const layout: ImageLayout = { workdir: '', env: {}, entrypoint: [], cmd: [], healthcheck: [], base: final.from, apkPackages: [] };
  const context$ = contextFiles(context);
  for (const stage of stages) {
    let workdir = '/';
    const local = (p: string) => path.join(stageDir(stage), path.posix.resolve(workdir, p));
    for (const instruction of stage.instructions) {
      const keyword = instruction.getKeyword();
      const args = instruction.getArguments().map((a) => a.getValue());
      if (keyword === 'WORKDIR') {
        workdir = path.posix.resolve(workdir, args[0]!);
        mkdirSync(local('.'), { recursive: true });
      } else if (keyword === 'COPY') {
        const flags = (instruction as unknown as { getFlags(): { getName(): string; getValue(): string | null }[] }).getFlags();
        const from = flags.find((f) => f.getName() === 'from')?.getValue() ?? undefined;
        const unknown = flags.filter((f) => f.getName() !== 'from');
        if (unknown.length) throw new Error(`test/artifact/image.ts does not know COPY --${unknown[0]!.getName()}: teach it`);
        const paths = [...args];
        const dest = paths.pop()!;
        for (const source of paths) {
          if (from) {
            const other = stages.find((s) => s.name === from);
            if (!other) throw new Error(`COPY --from=${from}: no such stage`);
            const target = dest.endsWith('/') ? path.join(local(dest), path.posix.basename(source)) : local(dest);
            cpSync(path.join(stageDir(other), source), target, { recursive: true, verbatimSymlinks: true });
            continue;
          }
          const prefix = path.posix.normalize(source).replace(/^\.\/?$/, '');
          const matches = context$.filter((f) => !prefix || f === prefix || f.startsWith(`${prefix}/`));
          if (!matches.length) throw new Error(`COPY ${source}: not in the build context (missing, or excluded by .dockerignore)`);
          for (const file of matches) {
            // Docker copies a directory's contents into dest, and a file into dest/ by its name.
            const rel = prefix && file !== prefix ? path.posix.relative(prefix, file) : file === prefix ? path.posix.basename(file) : file;
            const target = path.join(local(dest), rel);
            mkdirSync(path.dirname(target), { recursive: true });
            cpSync(path.join(context, file), target);
          }
        }
      } else if (keyword === 'RUN') {
        // Leading VAR=value assignments only steer how npm compiles (npm_config_nodedir): the checkout is installed.
        const command = args.join(' ').replace(/^(\w+=\S+\s+)+/, '');
        if (/^npm ci\b/.test(command)) {
          const modules = local('node_modules');
          mkdirSync(modules, { recursive: true });
          const names = args.includes('--omit=dev') ? productionPackages(context) : readdirSync(path.join(context, 'node_modules'));
          for (const name of names) {
            const real = path.join(context, 'node_modules', name);
            if (!existsSync(real)) continue; // an optional package for another platform
            mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
            symlinkSync(real, path.join(modules, name));
          }
        } else if (command === 'npm run build') {
          const built = spawnSync('npm', ['run', 'build'], { cwd: local('.'), encoding: 'utf8' });
          if (built.status !== 0) throw new Error(`RUN npm run build failed:\n${built.stdout}\n${built.stderr}`);
        } else if (/^apk add\b/.test(command)) {
          if (stage === final) layout.apkPackages.push(...args.slice(2).filter((a) => !a.startsWith('-')));
        } else if (/^mkdir \/node-headers && cd \/node-headers && npm pack /.test(command)) {
          // Node's headers for compiling better-sqlite3: the checkout's is compiled already (.ci/run uses the same ones).
        } else if (/^mkdir -p \/data && chown \d+:\d+ \/data$/.test(command)) {
          // The data directory: the test passes PDS_DATA_DIR on a temporary directory instead.
        } else throw new Error(`test/artifact/image.ts does not know what RUN ${command} does: teach it`);
      } else if (keyword === 'ENV') {
        for (const property of (instruction as unknown as { getProperties(): { getName(): string; getValue(): string | null }[] }).getProperties()) {
          if (stage === final) layout.env[property.getName()] = property.getValue() ?? '';
        }
      } else if (keyword === 'ENTRYPOINT' && stage === final) layout.entrypoint = execForm(instruction);
      else if (keyword === 'CMD' && stage === final) layout.cmd = execForm(instruction);
      else if (keyword === 'HEALTHCHECK' && stage === final) {
        const cmd = instruction.getArgumentsContent()!.replace(/^[\s\S]*?\bCMD\s+/, '');
        layout.healthcheck = cmd.trimStart().startsWith('[') ? (JSON.parse(cmd) as string[]) : ['/bin/sh', '-c', cmd];
      } else if (!['USER', 'EXPOSE', 'ARG', 'LABEL', 'ENTRYPOINT', 'CMD', 'HEALTHCHECK'].includes(keyword)) {
        throw new Error(`test/artifact/image.ts does not know the ${keyword} instruction: teach it`);
      }
    }
    if (stage === final) layout.workdir = path.join(stageDir(stage), workdir);
  }
  return layout;
}
