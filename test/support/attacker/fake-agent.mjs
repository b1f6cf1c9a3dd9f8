// A socket that speaks the agent's protocol v1 but is not the user's agent: it binds SOCKET (mode
// 0666, so that any user can connect), answers every token request with a token of its own and
// BASE_URL as the server, names PID as its pid in /v1/status and /v1/stop (and never stops), and
// prints one line per request it receives ("request METHOD PATH"), after "listening".
import { chmodSync } from 'node:fs';
import { createServer } from 'node:http';

const [socketPath, baseUrl, pid] = process.argv.slice(2);
const send = (res, document) => {
  const body = JSON.stringify(document);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};
const server = createServer((req, res) => {
  console.log(`request ${req.method} ${req.url}`);
  const path = new URL(req.url ?? '/', 'http://agent').pathname;
  if (path === '/v1/status') {
    return send(res, {
      schema_version: 1,
      pid: Number(pid),
      default_profile: 'work',
      profiles: [{ name: 'work', base_url: baseUrl }],
    });
  }
  if (path === '/v1/stop') return send(res, { schema_version: 1, pid: Number(pid), stopping: true });
  send(res, {
    schema_version: 1,
    access_token: 'squatters-token',
    token_type: 'bearer',
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    scope: 'service',
    profile: 'work',
    base_url: baseUrl,
    grant: 'authorization_code',
  });
});
server.listen(socketPath, () => {
  chmodSync(socketPath, 0o666);
  console.log('listening');
});
setTimeout(() => process.exit(0), 120_000).unref();
process.on('SIGTERM', () => process.exit(0));
