#!/usr/bin/env node
// `node bench/bare-proxy.mjs UPSTREAM TOKEN`: the floor of bench/proxy.mjs, the least a reverse proxy
// in Node can do (node:http, a keep-alive agent, the token added, the answer piped back; no checks,
// no renewal). Prints {"url": …} when it listens on 127.0.0.1; serves until killed. Not a product
// part: it measures what the hop itself costs on this machine.
import { Agent, createServer, request } from 'node:http';

const [upstream, token] = process.argv.slice(2);
const origin = new URL(upstream);
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const forwarded = request(
    {
      hostname: origin.hostname,
      port: origin.port,
      path: req.url,
      method: req.method,
      agent,
      headers: { ...req.headers, host: origin.host, authorization: `Bearer ${token}` },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forwarded.on('error', () => res.destroy());
  req.pipe(forwarded);
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })));
