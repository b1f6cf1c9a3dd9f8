// Preloaded with `node --import` by the start-up test: reports every package module resolved.
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => process.stderr.write(`[import] ${url}\n`));
port1.unref();
register(
  `data:text/javascript,${encodeURIComponent(`
    let port;
    export function initialize(data) { port = data.port; }
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      if (result.url.includes('/node_modules/')) port.postMessage(result.url);
      return result;
    }`)}`,
  { data: { port: port2 }, transferList: [port2] },
);

// require() calls (commander is CommonJS, required by extra-typings) do not pass the ESM hooks.
import Module from 'node:module';

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function recordResolve(request, parent, ...rest) {
  const filename = resolveFilename.call(this, request, parent, ...rest);
  if (filename.includes('/node_modules/')) process.stderr.write(`[import] ${filename}\n`);
  return filename;
};
