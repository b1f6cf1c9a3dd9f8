// A child for `mmauth exec` tests: for DURATION_MS it reads MMAUTH_TOKEN_FILE and asks
// MMAUTH_TOKEN_URL every INTERVAL_MS (250), presents each token to the emulator's /api/me (API_URL)
// right after it got it (README's contract: ask mmauth before each request), and
// writes a report (JSON) to REPORT_FILE: every token seen, every status, its own environment and
// the files of the token's directory. With ASK_AGAIN_ON_401=1 it does what README tells a program to
// do on a 401 (ask mmauth again, once; with ASK_AGAIN_WAIT_MS, until it hands out another token,
// within that bound) and counts that in `askedAgain`; the status that counts is the second answer. Exits 0 when every token was accepted, 1 otherwise.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const {
  DURATION_MS = '1000',
  INTERVAL_MS = '250',
  API_URL,
  REPORT_FILE,
  MMAUTH_TOKEN_FILE,
  MMAUTH_TOKEN_URL,
  MMAUTH_TOKEN_URL_AUTHORIZATION,
  ASK_AGAIN_ON_401,
  ASK_AGAIN_WAIT_MS,
} = process.env;
const seen = [];
const statuses = [];
let askedAgain = 0;
const readFile = () => {
  const text = readFileSync(MMAUTH_TOKEN_FILE, 'utf8');
  if (!text.endsWith('\n')) statuses.push('partial-file');
  return text.trim();
};
const askEndpoint = async () => {
  const response = await fetch(MMAUTH_TOKEN_URL, {
    headers: { authorization: `Bearer ${MMAUTH_TOKEN_URL_AUTHORIZATION}` },
  });
  return (await response.json()).access_token;
};
const deadline = Date.now() + Number(DURATION_MS);
while (Date.now() < deadline) {
  const present = async (source) => {
    const token = await source();
    let status = (await fetch(API_URL, { headers: { authorization: `Bearer ${token}` } })).status;
    if (status === 401 && ASK_AGAIN_ON_401 === '1') {
      askedAgain += 1;
      // With ASK_AGAIN_WAIT_MS, it asks until the answer is another token, for at most that long
      // (an exec on a loaded machine may take a moment to see another process's renewal).
      let again = await source();
      const untilMs = Date.now() + Number(ASK_AGAIN_WAIT_MS ?? '0');
      while (again === token && Date.now() < untilMs) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await source();
      }
      status = (await fetch(API_URL, { headers: { authorization: `Bearer ${again}` } })).status;
    }
    statuses.push(status);
    if (!seen.includes(token)) seen.push(token);
  };
  await present(readFile);
  if (MMAUTH_TOKEN_URL !== undefined) await present(askEndpoint);
  await new Promise((resolve) => setTimeout(resolve, Number(INTERVAL_MS)));
}
const dir = dirname(MMAUTH_TOKEN_FILE);
// Regular files only: with --serve the directory also holds the endpoint's Unix socket.
const files = Object.fromEntries(
  readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isFile())
    .map((name) => [name, readFileSync(join(dir, name), 'utf8')]),
);
const environ = readFileSync(`/proc/${process.pid}/environ`, 'utf8');
writeFileSync(REPORT_FILE, JSON.stringify({ seen, statuses, askedAgain, environ, files, dir }));
process.exit(statuses.every((status) => status === 200) ? 0 : 1);
