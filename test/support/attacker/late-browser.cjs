// The victim's browser, as BROWSER: writes its pid (its argv is what another user can read), waits
// DELAY_MS (a browser that starts slowly), then does what a browser does with mmauth's start
// address on an auto-approving emulator: keeps the cookie, follows the redirects, calls back.
const { writeFileSync } = require('node:fs');
const [url] = process.argv.slice(2);
writeFileSync(process.env.PID_FILE, String(process.pid), { mode: 0o644 });
setTimeout(
  async () => {
    const start = await fetch(url, { redirect: 'manual' });
    const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0];
    const authorize = await fetch(start.headers.get('location'), { redirect: 'manual' });
    await fetch(authorize.headers.get('location'), { headers: { cookie } });
  },
  Number(process.env.DELAY_MS ?? '0'),
);
