// Preloaded with `node --require` by the start-up tests. At exit it reports, on one stderr line, the
// built-in modules this run loaded after the preload and every CommonJS file in require.cache.
// Written with fs.writeSync so that reporting does not itself create the stderr stream.
const before = new Set(process.moduleLoadList);
process.once('exit', () => {
  const builtins = process.moduleLoadList
    .filter((entry) => entry.startsWith('NativeModule ') && !before.has(entry))
    .map((entry) => entry.slice('NativeModule '.length));
  require('node:fs').writeSync(2, `[loaded] ${JSON.stringify({ builtins, files: Object.keys(require.cache) })}\n`);
});
