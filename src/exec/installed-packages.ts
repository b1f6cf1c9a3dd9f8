import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * What of mmauth's installation runs when mmauth next runs, found from the running code: its own
 * `bin`, `dist` and `package.json`, and the directory of each package it depends on (the sandbox
 * engine among them) where Node would load it from. Never throws.
 */
export function installedPackages(): string[] {
  // The launcher (bin/mmauth.cjs) that runs this code, links resolved: the package is its parent's parent.
  let own: string | undefined;
  try {
    own = dirname(dirname(realpathSync(process.argv[1] ?? '')));
  } catch {
    return [];
  }
  if (!existsSync(join(own, 'package.json'))) return [];
  const manifest = join(own, 'package.json');
  let dependencies: string[] = [];
  try {
    const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> };
    dependencies = Object.keys(parsed.dependencies ?? {});
  } catch {
    dependencies = [];
  }
  const lookup = createRequire(manifest).resolve.paths;
  const found = dependencies.flatMap((name) => {
    const dir = (lookup(name) ?? []).map((base) => join(base, name)).find((candidate) => existsSync(candidate));
    return dir === undefined ? [] : [dir];
  });
  return [join(own, 'bin'), join(own, 'dist'), manifest, ...found];
}
