// Sign in from another device (RFC 8628) where the program runs with no browser (a container, a
// remote machine): the program shows a short code, the user enters it on a phone or laptop.
import { login, MmauthError } from 'mmauth';

try {
  const token = await login({
    flow: 'device',
    onDeviceCode: (code) => {
      // Say what the code grants before the code (RFC 8628 §5.4): it signs in whoever enters it.
      console.error(`Signing in ${code.clientId} to ${code.host} (scopes: ${code.scope}).`);
      console.error('Enter this code only for a sign-in you started yourself.');
      console.error(`Open ${code.verificationUri} and enter the code ${code.userCode}`);
      if (code.verificationUriComplete !== null) console.error(`  or open ${code.verificationUriComplete}`);
    },
  });
  console.log(JSON.stringify({ signedIn: token.profile, baseUrl: token.baseUrl }));
} catch (error) {
  if (!(error instanceof MmauthError)) throw error;
  // device_access_denied, device_code_expired, device_flow_unavailable, …
  console.error(`${error.code}: ${error.message}${error.hint ? ` (${error.hint})` : ''}`);
  process.exitCode = error.exitCode;
}
