import { privateCaHint } from '../util/private-ca-hint.js';
import type { MmauthError } from '../errors.js';
import { oauthExitCode, ExitCode } from '../exit-codes.js';
import type { FailureContext } from './failure-context.js';
import { probeHint, statusHint } from './hints.js';
import { firstSteps, nextStep, profileFlag } from '../settings/next-step.js';

// The hints the failure map gives by error code (README "Error codes"): worded for the run that
// failed, naming flags, variables and the next command for this profile.

export const SECRET_SOURCES = 'MMAUTH_CLIENT_SECRET, --client-secret-file or --client-secret-stdin';

/** Commands that take no --base-url: they talk to the profile's own server. */
const PROFILE_SERVER_COMMANDS = new Set(['token', 'header', 'refresh', 'exec', 'api']);

/** Hints for the server's OAuth errors (RFC 6749 §4.1.2.1, §5.2), worded for the run that failed. */
export function oauthHint(oauthError: string | undefined, context: FailureContext): string | undefined {
  const again = `\`${nextStep(context.origin ?? 'authorization_code', context.profileName)}\``;
  switch (oauthError) {
    case 'invalid_client':
      return `check the client id and secret (--client-id / MMAUTH_CLIENT_ID; ${SECRET_SOURCES})`;
    case 'invalid_grant':
      return `the authorization code was refused (expired, used, or issued for another redirect URI): run ${again} again`;
    case 'invalid_scope':
      return 'pass --scope with scopes the server knows (space-separated)';
    case 'unauthorized_client':
      return 'this client may not do that; check --client-id and the client secret';
    case 'access_denied':
      return `the request was denied; run ${again} again and allow access`;
    default:
      return undefined;
  }
}

const CREDENTIAL_STORE_FILE = 'MMAUTH_CREDENTIAL_STORE=file';
/** The commands that store credentials, and so take --insecure-storage. */
const STORING_COMMANDS = new Set(['login', 'client-credentials']);

const STORE_HINT = 'fix or move the file aside; mmauth never resets it by itself';

/** The hint for an error the lower layers raised, by its code and wire facts; undefined for none. */
export function hintByCode(error: MmauthError, context: FailureContext): string | undefined {
  const { details } = error;
  switch (error.code) {
    case 'invalid_base_url':
      return details.reason === 'not_absolute' ? 'pass --base-url https://host (or set MMAUTH_BASE_URL)' : undefined;
    case 'insecure_base_url':
      return details.suggestion === undefined ? undefined : `use ${details.suggestion}`;
    case 'invalid_profile_name':
      return 'use letters, digits, ".", "_" or "-", at most 64 characters (--profile / MMAUTH_PROFILE)';
    case 'port_in_use':
      return context.command === 'emulator'
        ? 'pass --port with another port, or --port 0 for a free one'
        : context.command === 'proxy'
          ? "another program (maybe another user's) holds that port, and would get your programs' requests: pass --port 0 for a free one, or give programs the proxy's Unix socket"
          : context.command === 'exec'
            ? 'pass --port 0, or leave --port out'
            : 'omit --redirect-uri to let mmauth pick a free port (the server accepts any port on 127.0.0.1), or pass another port';
    case 'port_not_allowed':
      return 'pass --redirect-uri with a port above 1023';
    case 'device_code_expired':
      return 'run mmauth login --device again, and enter the new code before it expires';
    case 'device_flow_unavailable':
      return 'if the server offers the device grant at an address of its own (GitLab: BASE/oauth/authorize_device), give it once with --device-authorization-url URL; else sign in with the browser (mmauth login) or in two steps (--start, --complete)';
    case 'device_access_denied':
      return 'the code was denied on the verification page: run mmauth login --device again and approve it there';
    case 'callback_timeout':
      if (details.cookie === 'missing') {
        return 'use a browser, or a BROWSER command that keeps cookies (curl: -c /dev/null turns its cookie engine on); or mmauth login --no-browser and open the URL yourself';
      }
      if (details.probe === 'passed') {
        return 'the server accepted the request (the probe saw its sign-in page), but the browser never came back to the redirect URI: finish signing in there, or paste the address it ended on; raise --wait SECONDS for more time';
      }
      return 'the authorization server may have shown an error page instead of redirecting (unknown client, redirect URI not registered, bad scope): check the browser; raise --wait SECONDS if you need more time';
    case 'request_timeout':
      return 'the server is slow or unreachable; raise --timeout SECONDS or try again';
    case 'tls_failure':
      return details.reason === 'not_tls'
        ? 'use http:// if the server is plain http on loopback, or the port that serves https'
        : details.reason === 'unknown_issuer'
          ? privateCaHint()
          : 'if the server uses a private CA, point NODE_EXTRA_CA_CERTS at its certificate (PEM)';
    case 'sandbox_unavailable':
      if (details.reason === 'missing') {
        return `install ${details.packages ?? 'bubblewrap socat ripgrep'} (Debian and Ubuntu: apt install ${details.packages ?? 'bubblewrap socat ripgrep'}); mmauth doctor says whether --sandbox works here`;
      }
      if (details.reason === 'platform') return 'run it on Linux or macOS, or run the program without --sandbox';
      if (details.reason === 'package_missing')
        return 'reinstall mmauth (npm install -g mmauth, or npm ci in a clone): the sandbox engine comes with it';
      if (details.reason === 'node')
        return 'run mmauth on Node 22 or 24 (the sandbox engine supports Node 22.12 and later)';
      if (details.reason === 'engine')
        return "the engine's own words in the message name what failed; mmauth doctor checks the sandbox step by step";
      return "bubblewrap's message above names what failed (often: unprivileged user namespaces are not allowed); mmauth doctor says whether --sandbox works here";
    case 'directory_file_not_approved':
      return `if you trust it: mmauth profile trust ${error.details.directory ?? 'DIR'}; or choose the profile yourself with --profile NAME or MMAUTH_PROFILE`;
    case 'directory_file_invalid':
      return 'fix or remove the file (mmauth profile use NAME --directory DIR writes one), or choose with --profile NAME or MMAUTH_PROFILE';
    case 'agent_unreachable':
      return 'start the agent where the grant is (eval "$(mmauth agent)") and forward its socket here, or unset MMAUTH_AGENT_SOCK to use this machine\'s own profiles';
    case 'agent_untrusted':
      return details.reason === 'base_url'
        ? 'this agent serves another server than the one set here: unset MMAUTH_BASE_URL, or use a profile name the agent serves for that server'
        : 'forward the agent into a private directory of yours on this side (mkdir -m 700 ~/.mmauth; ssh -o ExitOnForwardFailure=yes -R ~/.mmauth/agent.sock:"$MMAUTH_AGENT_SOCK" HOST, with the home directory spelled out) and point MMAUTH_AGENT_SOCK there';
    case 'agent_outdated':
      return 'restart the agent with this version of mmauth (mmauth agent --stop, then mmauth agent), or drop --verify';
    case 'profile_not_served':
      return 'start the agent with --profile NAME for each profile it should serve, or choose one it serves (mmauth status)';
    case 'connection_failed':
      if (details.reason === 'proxy_auth') return statusHint(407);
      if (details.reason === 'proxy_refused') {
        return 'check the proxy (HTTPS_PROXY / HTTP_PROXY) or exempt the host with NO_PROXY';
      }
      // These commands take no --base-url: the profile's own server is the one to check or change.
      return PROFILE_SERVER_COMMANDS.has(context.command ?? '')
        ? `check that the server of profile "${context.profileName}" is running; to point the profile elsewhere: mmauth profile set ${context.profileName} --base-url URL`
        : 'check --base-url and that the server is running';
    case 'response_too_large':
      return 'no OAuth answer is that large: check --base-url';
    case 'unexpected_status':
      return statusHint(error.status);
    case 'store_insecure':
      return 'make it yours and private (chown to this user; chmod 700 the directory, 600 the file; no links), or set MMAUTH_CONFIG_DIR to a directory of your own';
    case 'authorization_request_rejected':
      // A 404 at the authorization endpoint is the base URL's path, not the client's settings.
      return error.status === 404 ? statusHint(404) : probeHint(error.oauthError);
    case 'credentials_lost':
      return `run \`${nextStep(context.origin, context.profileName)}\` to store them again${context.origin === 'client_credentials' ? ' (give the client secret again)' : ''}; other profiles are untouched`;
    case 'keyring_unavailable':
      return STORING_COMMANDS.has(context.command ?? '')
        ? `unlock the keyring, or start a Secret Service (GNOME Keyring, KWallet, KeePassXC); to keep the credentials in the file in plain text (mode 0600) instead, pass --insecure-storage or set ${CREDENTIAL_STORE_FILE}`
        : `unlock the keyring, or start a Secret Service (GNOME Keyring, KWallet, KeePassXC): profile "${context.profileName}" keeps its credentials there, and nowhere else`;
    case 'keyring_failed':
      return `run \`mmauth doctor\` to check the keyring; to keep new credentials in the file instead, set ${CREDENTIAL_STORE_FILE}`;
    case 'store_lock_failed':
      return details.lock === undefined ? STORE_HINT : `if no mmauth is running, remove ${details.lock}`;
    case 'store_unreadable':
    case 'store_malformed':
    case 'store_write_failed':
      return STORE_HINT;
    case 'base_url_mismatch':
      return 'use a profile of its own for that URL (--profile NAME), or drop --base-url / MMAUTH_BASE_URL; --replace on login or client-credentials rebinds this profile';
    case 'identity_change':
      return 'use another profile (--profile NAME), or pass --replace to replace it';
    case 'not_renewable':
    case 'token_expired':
      return `get a new one: ${nextStep(context.origin, context.profileName)}`;
    case 'refresh_refused':
      return `sign in again: ${nextStep(context.origin, context.profileName)}`;
    case 'login_intercepted':
      return `nothing was stored; run \`${nextStep('authorization_code', context.profileName)}\` again, and check what runs on this machine (README "Security notes")`;
    case 'client_secret_required':
      return `give it with ${SECRET_SOURCES}`;
    case 'token_inactive':
      return context.origin === undefined
        ? `run ${firstSteps(context.profileName)} to get a new token`
        : `run \`${nextStep(context.origin, context.profileName)}\` to get a new token`;
    case 'state_mismatch':
      return 'this redirect does not belong to the login in progress';
    case 'iss_missing':
    case 'iss_mismatch':
      return `nothing was stored: something between the server and this machine changed the authorization response (RFC 9207 mix-up defence); run \`${nextStep('authorization_code', context.profileName)}\` again, and check proxies and what runs on this machine`;
    case 'deadline_exceeded':
      return `no token could be handed out in time; run \`mmauth token${profileFlag(context.profileName)}\` without --deadline to see why`;
    case 'revocation_not_confirmed':
      return 'the server revokes only tokens of the authenticated client: check the client id and secret of this profile';
    case 'authorization_error':
    case 'token_endpoint_error':
      if (error.status !== undefined && error.status >= 500) return 'try again later';
      if (details.reason === 'confidential_client') {
        return 'give its secret with MMAUTH_CLIENT_SECRET, --client-secret-file PATH or --client-secret-stdin';
      }
      return oauthHint(error.oauthError, context);
    case 'revocation_error': {
      const hint = oauthHint(error.oauthError, context);
      return hint ?? (oauthExitCode(error.oauthError) === ExitCode.auth ? 'check the client id and secret' : undefined);
    }
    default:
      return undefined;
  }
}
