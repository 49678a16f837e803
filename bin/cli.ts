/**
 * `pds <command> [options]`, on commander 14 (the last major that runs on Node 20): one file per command in
 * `bin/commands/`, registered below. Commander gives the help, `--version`, "did you mean" for a mistyped command or
 * option, and the usage errors, which end with exit code 2 (`bin/client/errors.ts` has the others: 1 failed,
 * 3 not signed in).
 *
 * The operator commands (`serve`, `mcp`, `token`, `console`, `scaffold`, `openapi`) keep their own options and help: commander
 * dispatches to them and passes everything after the name through (`run(argv)` → exit code).
 *
 * Adding a command: one file in `bin/commands/` exporting a function that returns a commander `Command`, and one line
 * in {@link PEOPLE_COMMANDS}. Names follow one convention: a plural noun lists (`pds tenants`), `<noun> <verb>` acts
 * (`pds tenants create`, `pds previews delete`); the older verbs (`deploy`, `rollback`, `preview`, `retire`) stay.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { cliErrorOf } from './client/api.js';
import { unknownOptionsFirst } from './client/command.js';
import { CliError, EXIT } from './client/errors.js';
import { cliWords } from './client/words.js';
import { approvalsCommand } from './commands/approvals.js';
import { completionCommand } from './commands/completion.js';
import { deployCommand } from './commands/deploy.js';
import { loginCommand } from './commands/login.js';
import { logoutCommand } from './commands/logout.js';
import { logsCommand } from './commands/logs.js';
import { policyCommand } from './commands/policy.js';
import { previewCommand, previewsCommand } from './commands/preview.js';
import { reposCommand } from './commands/repos.js';
import { retireCommand } from './commands/retire.js';
import { rollbackCommand } from './commands/rollback.js';
import { rolloutsCommand } from './commands/rollouts.js';
import { servicesCommand } from './commands/services.js';
import { statusCommand } from './commands/status.js';
import { tenantsCommand } from './commands/tenants.js';
import { waitCommand } from './commands/wait.js';
import { webhooksCommand } from './commands/webhooks.js';
import { whoamiCommand } from './commands/whoami.js';
import { workflowsCommand } from './commands/workflows.js';

/** The commands for people, in the order help lists them. */
const PEOPLE_COMMANDS: (() => Command)[] = [
  loginCommand,
  logoutCommand,
  whoamiCommand,
  tenantsCommand,
  reposCommand,
  policyCommand,
  approvalsCommand,
  webhooksCommand,
  servicesCommand,
  statusCommand,
  logsCommand,
  deployCommand,
  rollbackCommand,
  rolloutsCommand,
  previewsCommand,
  previewCommand,
  retireCommand,
  workflowsCommand,
  waitCommand,
];

/** The operator commands: each module exports `summary` and `run(argv): Promise<exit code>`. */
const OPERATOR_COMMANDS = ['serve', 'dev', 'mcp', 'token', 'console', 'scaffold', 'openapi'] as const;

interface OperatorModule {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const load = async (name: string) => (await import(`./commands/${name}.js`)) as OperatorModule;

/**
 * The version in pds's own package.json, found by walking up from this module: it sits one folder up from
 * `bin/cli.ts` in a checkout but two from `dist/bin/cli.js` (the image keeps `/app/package.json` beside `/app/dist`).
 * @throws Error when no package.json named "pds" is above `from`.
 */
export function packageVersion(from: URL = new URL('.', import.meta.url)): string {
  for (let dir = fileURLToPath(from); ; ) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'pds' && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json of pds above ${fileURLToPath(from)}`);
    dir = parent;
  }
}

/** `parent`'s settings (exit override, suggestions) on `command` and its subcommands, each with its own help hint. */
function inherit(command: Command, parent: Command, path: string): void {
  command.copyInheritedSettings(parent).showHelpAfterError(`(${path} --help for its options)`);
  for (const sub of command.commands) inherit(sub, command, `${path} ${sub.name()}`);
}

/** The program; `setExit` records the exit code an operator command returns. */
export async function buildProgram(setExit: (code: number) => void): Promise<Command> {
  const program = new Command('pds')
    .description('Platform Deployment Service: deploy and follow services, or run the server')
    .version(packageVersion(), '-v, --version', 'print the version')
    .usage('<command> [options]')
    .enablePositionalOptions()
    .showSuggestionAfterError()
    .exitOverride();
  // One line per command, so the whole help fits a terminal screen.
  program.configureHelp({ sortSubcommands: false, subcommandTerm: (c) => c.name() });
  for (const make of PEOPLE_COMMANDS) {
    const command = unknownOptionsFirst(make());
    inherit(command, program, `pds ${command.name()}`);
    // `pds preview` is the old name of `pds previews create`: it works, unlisted, so the help keeps to one screen.
    program.addCommand(command, { hidden: command.name() === 'preview' });
  }
  for (const name of OPERATOR_COMMANDS) {
    const module = await load(name);
    program
      // `pds console` (a sandbox's one-time console sign-in link) is named where it is needed (npm start's banner,
      // pds dev, the console's sign-in page, README): it works, unlisted, so the help keeps to one screen.
      .command(name, { hidden: name === 'console' })
      .summary(module.summary)
      .description(`${module.summary} (its own options: pds ${name} --help)`)
      .helpOption(false)
      .passThroughOptions()
      .allowUnknownOption()
      .allowExcessArguments()
      .argument('[args...]')
      .action(async (args: string[]) => setExit(await module.run(args)));
  }
  program.addCommand(completionCommand(program).copyInheritedSettings(program));
  program.addHelpText('after', '\nStart with: pds login --server https://pds.example.com\nOr try it here: pds dev (the sandbox on this machine, you as platform admin)\nOptions of a command: pds <command> --help');
  return program;
}

/** Run the CLI; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let exit: number = EXIT.ok;
  const program = await buildProgram((code) => (exit = code));
  if (argv.length === 0) {
    process.stderr.write(program.helpInformation());
    return EXIT.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exit;
  } catch (thrown) {
    const err = cliErrorOf(thrown);
    if (err instanceof CommanderError) {
      // Help and --version end with exit code 0; every other commander error is a usage error (it printed why).
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof CliError) {
      process.stderr.write(`pds: ${cliWords(err.message)}\n`);
      return err.exitCode;
    }
    process.stderr.write(`pds ${argv[0]}: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failed;
  }
}
