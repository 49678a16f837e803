/**
 * `pds <command> [options]`: dispatches to one file per command in `bin/commands/`.
 * Each command module exports `run(argv: string[]): Promise<number>` (the exit code) and `summary` (one line).
 */
const COMMANDS = ['serve', 'mcp', 'token', 'scaffold', 'openapi'] as const;
type CommandName = (typeof COMMANDS)[number];

interface CommandModule {
  summary: string;
  run(argv: string[]): Promise<number>;
}

async function load(name: CommandName): Promise<CommandModule> {
  return (await import(`./commands/${name}.js`)) as CommandModule;
}

/** Run the CLI; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const lines = await Promise.all(
      COMMANDS.map(async (c) => `  ${c.padEnd(10)} ${(await load(c).catch(() => ({ summary: '' }))).summary}`),
    );
    console.log(`usage: pds <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nRun "pds <command> --help" for a command's options.`);
    return name ? 0 : 2;
  }
  if (!(COMMANDS as readonly string[]).includes(name)) {
    console.error(`pds: unknown command "${name}"; commands are: ${COMMANDS.join(', ')}`);
    return 2;
  }
  try {
    return await (await load(name as CommandName)).run(rest);
  } catch (err) {
    console.error(`pds ${name}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
