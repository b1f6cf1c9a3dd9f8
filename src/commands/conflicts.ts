/** The words mmauth has always used for options that exclude each other, by option pair. */
const CONFLICTS: ReadonlyArray<[string, string, string]> = [
  [
    '--client-secret-file',
    '--client-secret-stdin',
    '--client-secret-file and --client-secret-stdin exclude each other',
  ],
  [
    '--implicit',
    '--client-secret-file',
    'the implicit flow uses no client secret: drop --client-secret-file/--client-secret-stdin',
  ],
  [
    '--implicit',
    '--client-secret-stdin',
    'the implicit flow uses no client secret: drop --client-secret-file/--client-secret-stdin',
  ],
  [
    '--with-token',
    '--implicit',
    '--with-token stores a token you already have: it takes no --implicit, --redirect-uri or --scope',
  ],
  [
    '--with-token',
    '--redirect-uri',
    '--with-token stores a token you already have: it takes no --implicit, --redirect-uri or --scope',
  ],
  [
    '--with-token',
    '--scope',
    '--with-token stores a token you already have: it takes no --implicit, --redirect-uri or --scope',
  ],
];

/**
 * mmauth's message for commander's conflicting-option error (`option '--a <x>' cannot be used
 * with option '--b'`), or undefined when the pair is not one of ours.
 */
export function conflictMessage(commanderMessage: string): string | undefined {
  const flags = [...commanderMessage.matchAll(/option '(--[\w-]+)/g)].map((match) => match[1]);
  if (flags.length !== 2) return undefined;
  const found = CONFLICTS.find(([a, b]) => (a === flags[0] && b === flags[1]) || (a === flags[1] && b === flags[0]));
  return found?.[2];
}
