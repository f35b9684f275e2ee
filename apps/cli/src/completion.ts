/** `mailroom completion bash|zsh`: a completion script built from the command tree itself. */
import { Command } from 'commander';
import { UsageError } from './context';

const words = (cmd: Command) => [...cmd.commands.map((c) => c.name()), ...cmd.options.map((o) => o.long ?? o.short ?? '')].filter(Boolean).join(' ');

/** A bash function completing commands, subcommands and options (zsh loads it through bashcompinit). */
export function completionScript(program: Command, shell: 'bash' | 'zsh'): string {
  const name = program.name();
  const cases = program.commands.map((c) => `    ${c.name()}) opts="${words(c)} --json --help" ;;`).join('\n');
  const nested = program.commands
    .flatMap((c) => c.commands.map((s) => `    "${c.name()} ${s.name()}") opts="${words(s)} --json --help" ;;`))
    .join('\n');
  const bash = `_${name}_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts
  case "\${COMP_WORDS[1]} \${COMP_WORDS[2]}" in
${nested}
    *)
  case "\${COMP_WORDS[1]}" in
${cases}
    *) opts="${words(program)}" ;;
  esac ;;
  esac
  if [ "$COMP_CWORD" -eq 1 ]; then opts="${words(program)}"; fi
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -F _${name}_complete ${name}
`;
  return shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${bash}` : bash;
}

export function completionCommand(program: Command): Command {
  return new Command('completion')
    .description('print a shell completion script: eval "$(mailroom completion bash)" (or zsh)')
    .argument('[shell]', 'bash or zsh', 'bash')
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError(`no completion for ${shell}: bash or zsh`);
      process.stdout.write(completionScript(program, shell));
    });
}
