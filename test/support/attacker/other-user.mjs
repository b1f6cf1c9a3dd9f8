// Plays another local user (the test spawns it with another uid): reads the browser's argv from
// /proc, as any user can, and races the victim's login: requests the one-time start address, then
// delivers a callback with a code of its own. Prints one JSON line: what each step got.
import { readFileSync } from 'node:fs';

const [pidFile] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// A fetch whose connection is closed unanswered may leave no handle alive (AbortSignal.timeout's
// timer is unref'd): this keeps the process up until it has printed its result.
const alive = setInterval(() => undefined, 1000);
let pid = '';
for (let i = 0; i < 200 && pid === ''; i++) {
  try {
    pid = readFileSync(pidFile, 'utf8').trim();
  } catch {
    await sleep(10);
  }
}
const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
const startAddress = argv.at(-1) ?? '';
const attempt = async (url, init) => {
  try {
    const answer = await fetch(url, { redirect: 'manual', ...init, signal: AbortSignal.timeout(3000) });
    return {
      status: answer.status,
      location: answer.headers.get('location'),
      cookie: answer.headers.get('set-cookie'),
    };
  } catch (error) {
    return { error: String(error.cause?.code ?? error.message) };
  }
};
const start = await attempt(startAddress);
const callback = new URL('/callback?code=attackers-code&state=guessed', startAddress);
const delivered = await attempt(callback.href, start.cookie ? { headers: { cookie: start.cookie.split(';')[0] } } : {});
const connections = [];
for (let i = 0; i < 200; i++) connections.push(attempt(new URL('/', startAddress).href));
const held = (await Promise.all(connections)).filter((result) => result.status !== undefined).length;
console.log(JSON.stringify({ uid: process.getuid(), startAddress, start, delivered, held }));
clearInterval(alive);
