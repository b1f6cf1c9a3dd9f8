/** The completion scripts of `mmauth completion` (bash, zsh, fish), generated from the commands as completion sees them. */

/** One option as completion sees it. */
export interface OptionSpec {
  flags: string[];
  description: string;
  takesValue: boolean;
  /** Fixed values (e.g. --flavor), completed as words. */
  choices: readonly string[] | undefined;
  isFile: boolean;
  /** Its value is a profile name (--profile): completed from the config file. */
  isProfile: boolean;
}

/** The words that list the profile names, fast (the config file only: no network, no keyring). */
const PROFILE_NAMES = 'mmauth profile list --names 2>/dev/null';
/** The `profile` subcommands whose argument is a profile name. */
const NAMED = ['use', 'set', 'rename', 'remove'];

/** One subcommand as completion sees it. */
export interface CommandSpec {
  name: string;
  description: string;
  options: OptionSpec[];
  /** Fixed values of its first argument, if any (`completion bash|zsh|fish`). */
  argumentChoices: readonly string[] | undefined;
}

const quoteSh = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function bashScript(specs: CommandSpec[]): string {
  const cases = specs
    .map((spec) => {
      const words = spec.options.flatMap((o) => o.flags).join(' ');
      const valued = spec.options.filter((o) => o.takesValue).flatMap((o) => o.flags);
      const choiceCases = spec.options
        .filter((o) => o.choices !== undefined)
        .map(
          (o) =>
            `        ${o.flags.join('|')}) COMPREPLY=($(compgen -W ${quoteSh((o.choices ?? []).join(' '))} -- "$cur")); return ;;`,
        );
      const fileCases = spec.options
        .filter((o) => o.isFile)
        .map((o) => `        ${o.flags.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;`);
      const profileCases = [
        ...spec.options.filter((o) => o.isProfile).map((o) => o.flags.join('|')),
        ...(spec.name === 'profile' ? NAMED : []),
        // Names are read line by line, never word-expanded (compgen -W would run a $(…) in one: N27).
      ].map(
        (pattern) =>
          `        ${pattern}) COMPREPLY=(); while IFS= read -r name; do [[ $name == "$cur"* ]] && COMPREPLY+=("$name"); done < <(${PROFILE_NAMES}); return ;;`,
      );
      const valueCase = valued.length === 0 ? [] : [`        ${valued.join('|')}) COMPREPLY=(); return ;;`];
      const argument =
        spec.argumentChoices === undefined
          ? ''
          : `\n      [[ "$cur" != -* ]] && { COMPREPLY=($(compgen -W ${quoteSh(spec.argumentChoices.join(' '))} -- "$cur")); return; }`;
      return `    ${spec.name})
      case "$prev" in
${[...choiceCases, ...fileCases, ...profileCases, ...valueCase].join('\n')}
      esac${argument}
      COMPREPLY=($(compgen -W ${quoteSh(words)} -- "$cur")) ;;`;
    })
    .join('\n');
  return `# bash completion for mmauth. Load it with: source <(mmauth completion bash)
_mmauth() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" i name
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in -*) ;; *) cmd="\${COMP_WORDS[i]}"; break ;; esac
  done
  case "$cmd" in
    "") COMPREPLY=($(compgen -W ${quoteSh(`${specs.map((s) => s.name).join(' ')} --help --version`)} -- "$cur")) ;;
${cases}
    *) COMPREPLY=() ;;
  esac
}
complete -o default -F _mmauth mmauth`;
}

const quoteZsh = (text: string) =>
  text
    .replace(/\\/g, '\\\\')
    .replace(/'/g, `'\\''`)
    .replace(/([[\]:])/g, '\\$1');

export function zshScript(specs: CommandSpec[]): string {
  const commands = specs.map((spec) => `    '${spec.name}:${quoteZsh(spec.description)}'`).join('\n');
  const cases = specs
    .map((spec) => {
      const args = spec.options.map((o) => {
        const names = o.flags.length > 1 ? `{${o.flags.join(',')}}` : (o.flags[0] ?? '');
        const exclusive = o.flags.length > 1 ? `'(${o.flags.join(' ')})'` : '';
        const action = !o.takesValue
          ? ''
          : o.choices !== undefined
            ? `:value:(${o.choices.join(' ')})`
            : o.isFile
              ? ':file:_files'
              : o.isProfile
                ? `:profile:(\$(${PROFILE_NAMES}))`
                : ':value:';
        return `        ${exclusive}${names}'[${quoteZsh(o.description)}]${action}'`;
      });
      if (spec.argumentChoices !== undefined) {
        args.push(`        ':${spec.name === 'profile' ? 'subcommand' : 'shell'}:(${spec.argumentChoices.join(' ')})'`);
      }
      if (spec.name === 'profile') args.push(`        '::profile:(\$(${PROFILE_NAMES}))'`);
      return `    ${spec.name})\n      _arguments -s \\\n${args.join(' \\\n')} ;;`;
    })
    .join('\n');
  return `#compdef mmauth
# zsh completion for mmauth. Save as _mmauth in a directory of $fpath, or: source <(mmauth completion zsh)
_mmauth() {
  local -a commands
  commands=(
${commands}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'mmauth command' commands
    _arguments '(-h --help)'{-h,--help}'[display help]' '(-V --version)'{-V,--version}'[show the version]'
    return
  fi
  local command=$words[2]
  shift words
  (( CURRENT-- ))
  case $command in
${cases}
  esac
}
if [[ $funcstack[1] == _mmauth ]]; then
  _mmauth "$@"
else
  compdef _mmauth mmauth
fi`;
}

const quoteFish = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function fishScript(specs: CommandSpec[]): string {
  const lines = [
    '# fish completion for mmauth. Save as ~/.config/fish/completions/mmauth.fish',
    'complete -c mmauth -f',
    `complete -c mmauth -n __fish_use_subcommand -s h -l help -d 'display help'`,
    `complete -c mmauth -n __fish_use_subcommand -s V -l version -d 'show the version'`,
  ];
  for (const spec of specs) {
    lines.push(`complete -c mmauth -n __fish_use_subcommand -a ${spec.name} -d ${quoteFish(spec.description)}`);
    const when = `-n '__fish_seen_subcommand_from ${spec.name}'`;
    for (const option of spec.options) {
      const names = option.flags
        .map((flag) => (flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`))
        .join(' ');
      const value = !option.takesValue
        ? ''
        : option.choices !== undefined
          ? ` -x -a ${quoteFish(option.choices.join(' '))}`
          : option.isFile
            ? ' -r -F'
            : option.isProfile
              ? ` -x -a '(${PROFILE_NAMES})'`
              : ' -x';
      lines.push(`complete -c mmauth ${when} ${names}${value} -d ${quoteFish(option.description)}`);
    }
    if (spec.argumentChoices !== undefined) {
      lines.push(`complete -c mmauth ${when} -a ${quoteFish(spec.argumentChoices.join(' '))}`);
    }
    if (spec.name === 'profile') {
      lines.push(`complete -c mmauth -n '__fish_seen_subcommand_from ${NAMED.join(' ')}' -a '(${PROFILE_NAMES})'`);
    }
  }
  return lines.join('\n');
}
