import type { TokenOrigin } from '../oauth/wire.js';

/** ` --profile NAME`, or nothing for the default profile: what every suggested command carries. */
export function profileFlag(profileName: string): string {
  return profileName === 'default' ? '' : ` --profile ${profileName}`;
}

/**
 * The command that gets a new token of `origin` for the profile, e.g. `mmauth client-credentials
 * --profile ci` or `mmauth login --implicit`; without an origin, `mmauth login`.
 */
export function nextStep(origin: TokenOrigin | undefined, profileName: string): string {
  const command = {
    client_credentials: 'mmauth client-credentials',
    personal: 'mmauth login --with-token',
    implicit: 'mmauth login --implicit',
    authorization_code: 'mmauth login',
  }[origin ?? 'authorization_code'];
  return `${command}${profileFlag(profileName)}`;
}

/** Either way of getting a first token, for a profile whose kind is not known yet. */
export function firstSteps(profileName: string): string {
  return `\`mmauth login${profileFlag(profileName)}\` or \`mmauth client-credentials${profileFlag(profileName)}\``;
}
