/**
 * `pds completion [bash|zsh]`: a shell completion script for the commands and options `pds` has, read from the
 * commander tree itself (so a command added later completes without touching this file). zsh uses the bash script
 * through `bashcompinit`. Install: `pds completion bash >> ~/.bashrc`, or `pds completion zsh >> ~/.zshrc`.
 */
import { Command, type Command as CommandType } from 'commander';
import { usageError } from '../client/errors.js';

/** Words completed after each command name: its long and short options. */
function optionWords(command: CommandType): string[] {
  return command.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
}

/** The bash completion script for `program`. */
export function bashCompletion(program: CommandType): string {
  const commands = program.commands.filter((c) => !(c as { _hidden?: boolean })._hidden);
  const cases = commands.map((c) => `    ${c.name()}) words="${optionWords(c).join(' ')}" ;;`).join('\n');
  return `# pds completion (bash; zsh: autoload -U +X bashcompinit && bashcompinit first)
_pds_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${commands.map((c) => c.name()).join(' ')} help --help --version" -- "$cur") )
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=( $(compgen -W "$words --help" -- "$cur") )
}
complete -o default -F _pds_complete pds
`;
}

export function completionCommand(program: CommandType) {
  return new Command('completion')
    .summary('print a bash or zsh completion script')
    .argument('[shell]', 'bash or zsh', 'bash')
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw usageError(`completion is available for bash and zsh (got "${shell}")`);
      const prelude = shell === 'zsh' ? 'autoload -U +X bashcompinit && bashcompinit\n' : '';
      process.stdout.write(prelude + bashCompletion(program));
    });
}
