/**
 * mmauth as a library (getToken, createTokenSource, login and logout: the package's main export): the same profiles,
 * store, keyring, lock and renewal as the command line, for Node programs. docs/library.md has the
 * contract and examples the test suite runs. Imports no command-line package (commander, chalk,
 * inquirer, open). The export is a public API: changed only by adding.
 */
export { getToken, type Token, type TokenOptions } from './library/get-token.js';
export { createTokenSource, type TokenSource } from './library/token-source.js';
export { login, logout, type DeviceCode, type LoginOptions, type LogoutResult } from './library/login.js';
export { LoginRequiredError } from './library/library-errors.js';
export { ERROR_CODES, MmauthError, isMmauthError, type ErrorCode } from './errors.js';
