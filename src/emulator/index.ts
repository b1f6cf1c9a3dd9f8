/** Public entry of `mmauth/emulator`: start the service's OAuth interface in your own tests. */
export { startEmulator, type Emulator, type EmulatorOptions } from './emulator.js';
export { redirectUriMatches, type EmulatorFlavor, type ObservedRequest } from './handler.js';
