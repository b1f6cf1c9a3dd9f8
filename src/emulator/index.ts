/** Public entry of `mmauth/emulator`: start the service's OAuth interface in your own tests. */
export { startEmulator, type Emulator, type EmulatorOptions } from './emulator.js';
export { redirectUriMatches } from './redirect-uri.js';
export type { EmulatorFlavor, ObservedRequest } from './routes.js';
