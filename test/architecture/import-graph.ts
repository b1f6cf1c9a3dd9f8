/** The import graph of src/, read from the source text: the files, their layers and their imports. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../src');

/** Every .ts file under `dir`. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The layer of a file under src/: its first directory, or its own name for a top-level file. */
export function layerOf(file: string): string {
  const path = relative(SRC, file).replace(/\\/g, '/');
  return path.includes('/') ? (path.split('/')[0] ?? '') : path.replace(/\.ts$/, '');
}

/** One import of a file: its specifier, and whether it loads at run time and at once (not `import type`, not `import()`). */
export interface ImportEdge {
  specifier: string;
  isStatic: boolean;
  isTypeOnly: boolean;
}

/** Every module specifier a file imports, statically or with import(). */
export function importsOf(text: string): string[] {
  return importEdgesOf(text).map((edge) => edge.specifier);
}

/** Every import of `text`, with how it loads. */
export function importEdgesOf(text: string): ImportEdge[] {
  return [
    ...text.matchAll(
      /(import\s+type\b[^;]*?from\s+|export\s+type\b[^;]*?from\s+|from\s+|import\s*\(\s*|import\s+)'([^']+)'/g,
    ),
  ].map((match) => ({
    specifier: match[2] ?? '',
    isStatic: !(match[1] ?? '').startsWith('import(') && !/^import\s*\($/.test((match[1] ?? '').trim()),
    isTypeOnly: /^(?:import|export)\s+type\b/.test(match[1] ?? ''),
  }));
}

/** The file a relative specifier of `from` names (absolute, .ts), or undefined for a package. */
export function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return resolve(dirname(from), specifier).replace(/\.js$/, '.ts');
}

/** `file` → the files it imports (relative imports only), keeping the edges `keep` accepts. */
export function importGraph(files: readonly string[], keep: (edge: ImportEdge) => boolean): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const edges = importEdgesOf(readFileSync(file, 'utf8')).filter(keep);
    graph.set(
      file,
      edges.flatMap((edge) => resolveImport(file, edge.specifier) ?? []),
    );
  }
  return graph;
}

/** The import circles of `graph`: each strongly connected set of two or more files (Tarjan). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const circle: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      circle.push(member);
      if (member === node) break;
    }
    if (circle.length > 1) circles.push(circle.map((file) => relative(SRC, file)).sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

/** The files reachable from `entry` over `graph`, `entry` included. */
export function reachableFrom(entry: string, graph: ReadonlyMap<string, readonly string[]>): Set<string> {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const target of graph.get(file) ?? []) {
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return seen;
}
