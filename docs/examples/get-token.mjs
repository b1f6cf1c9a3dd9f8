// A token for one request: the CLI's profile, renewed first when stale, one renewal across processes.
import { getToken, LoginRequiredError } from 'mmauth';

try {
  const token = await getToken({ minTtl: 60 });
  // token.baseUrl: the profile's server, the only one this token may go to.
  const response = await fetch(new URL('/api/me', token.baseUrl), {
    headers: { Authorization: `Bearer ${token.accessToken}` },
  });
  console.log(JSON.stringify({ status: response.status, profile: token.profile, scope: token.scope }));
} catch (error) {
  if (!(error instanceof LoginRequiredError)) throw error;
  // Only a login helps: say which command, or fall through to another credential.
  console.error(`${error.message}: run \`mmauth login\``);
  process.exitCode = error.exitCode;
}
