// A child for `mmauth exec` tests: for DURATION_MS it reads MMAUTH_TOKEN_FILE and asks
// MMAUTH_TOKEN_URL every INTERVAL_MS (250), presents each token to the emulator's /api/me (API_URL)
// right after it got it (README's contract: ask mmauth before each request), and
// writes a report (JSON) to REPORT_FILE: every token seen, every status, its own environment and
// the files of the token's directory. Exits 0 when every token was accepted, 1 otherwise.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const {
  DURATION_MS = '1000',
  INTERVAL_MS = '250',
  API_URL,
  REPORT_FILE,
  MMAUTH_TOKEN_FILE,
  MMAUTH_TOKEN_URL,
  MMAUTH_TOKEN_URL_AUTHORIZATION,
} = process.env;
const seen = [];
const statuses = [];
const deadline = Date.now() + Number(DURATION_MS);
while (Date.now() < deadline) {
  const present = async (token) => {
    const api = await fetch(API_URL, { headers: { authorization: `Bearer ${token}` } });
    statuses.push(api.status);
    if (!seen.includes(token)) seen.push(token);
  };
  const fromFile = readFileSync(MMAUTH_TOKEN_FILE, 'utf8');
  if (!fromFile.endsWith('\n')) statuses.push('partial-file');
  await present(fromFile.trim());
  if (MMAUTH_TOKEN_URL !== undefined) {
    const response = await fetch(MMAUTH_TOKEN_URL, {
      headers: { authorization: `Bearer ${MMAUTH_TOKEN_URL_AUTHORIZATION}` },
    });
    const body = await response.json();
    await present(body.access_token);
  }
  await new Promise((resolve) => setTimeout(resolve, Number(INTERVAL_MS)));
}
const dir = dirname(MMAUTH_TOKEN_FILE);
const files = Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
const environ = readFileSync(`/proc/${process.pid}/environ`, 'utf8');
writeFileSync(REPORT_FILE, JSON.stringify({ seen, statuses, environ, files, dir }));
process.exit(statuses.every((status) => status === 200) ? 0 : 1);
