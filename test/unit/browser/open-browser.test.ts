import { describe, expect, it } from 'vitest';
import { reasonNotToOpen, splitCommandLine } from '../../../src/browser/open-browser.js';

describe('splitCommandLine (BROWSER)', () => {
  it.each([
    ['firefox', ['firefox']],
    ['  open   -a Safari ', ['open', '-a', 'Safari']],
    ['"/opt/My Browser/bin" --new-window', ['/opt/My Browser/bin', '--new-window']],
    ["node '/path with space/agent.js'", ['node', '/path with space/agent.js']],
    ['a\\ b c', ['a b', 'c']],
    ['echo "say \\"hi\\""', ['echo', 'say "hi"']],
    ['x ""', ['x', '']],
    ['$(rm -rf ~)', ['$(rm', '-rf', '~)']],
  ])('%s', (command, words) => {
    expect(splitCommandLine(command)).toEqual(words);
  });
});

describe('reasonNotToOpen', () => {
  it.each([
    [{ CI: 'true', DISPLAY: ':0' }, 'linux', /CI/],
    [{ SSH_CONNECTION: '1 2 3 4', DISPLAY: ':0' }, 'linux', /SSH/],
    [{}, 'linux', /no display/],
    [{ DISPLAY: ':0' }, 'linux', undefined],
    [{ WAYLAND_DISPLAY: 'wayland-0' }, 'linux', undefined],
    [{}, 'darwin', undefined],
    [{ CI: 'false' }, 'darwin', undefined],
  ] as const)('%j on %s', (env, platform, reason) => {
    const result = reasonNotToOpen(env, platform);
    if (reason === undefined) expect(result).toBeUndefined();
    else expect(result).toMatch(reason);
  });
});
