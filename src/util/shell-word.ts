/**
 * `text` as one POSIX sh word: in single quotes, each `'` written as `'\''` (POSIX sh 2.2.2: nothing
 * inside single quotes is special). For command lines mmauth hands a shell (the sandbox's inner
 * command, its scan, the agent's `export` line). Any string; never throws.
 */
export const shellWord = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
