import type { Output } from './output.js';
import { formatInstant } from './format.js';

/** What the user is shown of a device sign-in (RFC 8628 §3.3): never the device code. */
export interface DeviceCodeShown {
  clientId: string;
  scope: string;
  host: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string | undefined;
  /** Epoch ms. */
  expiresAtMs: number;
}

/**
 * Says on stderr which client, scopes and host the code signs in, RFC 8628 §5.4's warning in one
 * line (a code typed for someone else signs them in as you), then where to enter it: the
 * verification address and the user code always (§3.3.1), and the address with the code in it when
 * the server gives one; the code's expiry. The device code is a secret and never shown.
 */
export function showDeviceCode(out: Output, shown: DeviceCodeShown): void {
  out.info(`Signing in client ${shown.clientId} to ${shown.host} with scopes "${shown.scope}", from another device.`);
  out.warn(
    'enter this code only for a sign-in you started yourself: whoever asks you to type it for them gets your access',
  );
  out.instruct(`Open ${shown.verificationUri} on any device and enter the code:  ${shown.userCode}`);
  if (shown.verificationUriComplete !== undefined) out.instruct(`  or open ${shown.verificationUriComplete}`);
  out.info(`The code expires at ${formatInstant(shown.expiresAtMs)}.`);
}

/**
 * `url` drawn as a QR code in block characters, no escape sequences (the `qrcode` package, loaded only for
 * --qr): a phone's camera opens the verification address, with the code in it when the server gave one.
 */
export async function qrCodeOf(url: string): Promise<string> {
  const { default: QRCode } = await import('qrcode');
  return (await QRCode.toString(url, { type: 'utf8' })).replace(/\n+$/, '');
}
