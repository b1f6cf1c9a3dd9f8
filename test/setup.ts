/**
 * Runs before every test file (vitest's setupFiles): whatever the developer's shell holds that
 * mmauth reads — any MMAUTH_* variable (a profile, a base URL, a client id, an agent socket) and the
 * proxy variables — is taken out of this process's environment, so that in-process tests and the
 * library's defaults see none of it, as spawned binaries already do (support/cli.ts cleanEnv).
 */
for (const name of Object.keys(process.env)) {
  if (/^MMAUTH_/.test(name) || /^(https?|all|no)_proxy$/i.test(name)) delete process.env[name];
}
