// Sign the user in from a program (a desktop tool, an editor extension), then sign out again.
// The grant is the CLI's: `mmauth token` in a shell hands out the same token afterwards.
import { spawn } from 'node:child_process';
import { login, logout, MmauthError } from 'mmauth';

// Open the page the program's own way (an editor's openExternal); here the BROWSER command when one
// is set, else login()'s default: the system browser.
const browser = process.env.BROWSER?.trim().split(/\s+/);
const openBrowser = browser ? (url) => spawn(browser[0], [...browser.slice(1), url], { stdio: 'ignore' }) : undefined;

try {
  const token = await login({ openBrowser, scope: 'service' });
  console.log(JSON.stringify({ signedIn: token.profile, baseUrl: token.baseUrl, accessToken: token.accessToken }));
  if (process.argv.includes('--logout')) {
    const ended = await logout({ profile: token.profile });
    console.log(JSON.stringify({ revoked: ended.revoked, confirmed: ended.confirmed }));
  }
} catch (error) {
  if (!(error instanceof MmauthError)) throw error;
  // A confidential client without its secret fails here, before any browser opens.
  console.error(`${error.code}: ${error.message}${error.hint ? ` (${error.hint})` : ''}`);
  process.exitCode = error.exitCode;
}
