import { escapeHtml } from '../util/escape-html.js';

/** A page of the emulator's own: `body` (HTML) under the common header, titled `title`. */
export function renderPage(title: string, body: string): string {
  return layout(title, body);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)} · mmauth emulator</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.3rem}label{display:block;margin:.6rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem}
button{padding:.4rem 1rem;margin:.8rem .4rem 0 0}.error{color:#cf222e}.muted{color:#59636e;font-size:.9rem}
form.inline{display:inline}</style></head>
<body><p class="muted">mmauth emulator — a local stand-in for the service's OAuth interface</p>
${body}</body></html>
`;
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
}

/** The sign-in page shown to a browser with no session (Doorkeeper apps render Devise's). */
export function renderLoginPage(returnTo: string, csrf: string, error?: string): string {
  return layout(
    'Sign in',
    `<h1>Sign in</h1>
${error === undefined ? '' : `<p class="error" id="error">${escapeHtml(error)}</p>`}
<form method="post" action="/oauth2/sign_in" id="login-form">
${hidden({ authenticity_token: csrf, return_to: returnTo })}
<label for="login">Login</label><input type="text" id="login" name="login" autocomplete="username" autofocus>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password">
<button type="submit" id="sign-in">Sign in</button>
</form>`,
  );
}

/** The consent page: Authorize and Deny forms, each with its own CSRF token (Doorkeeper's shape). */
export function renderConsentPage(
  clientName: string,
  userLogin: string,
  scopes: string[],
  fields: Record<string, string>,
  allowCsrf: string,
  denyCsrf: string,
): string {
  return layout(
    'Authorize',
    `<h1>Authorize ${escapeHtml(clientName)} to use your account?</h1>
<p>Signed in as <strong id="user">${escapeHtml(userLogin)}</strong>. This application will be able to:</p>
<ul id="scopes">${scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>
<form method="post" action="/oauth2/authorize" class="inline" id="allow-form">
${hidden({ ...fields, authenticity_token: allowCsrf })}
<button type="submit" id="allow" name="commit" value="Authorize">Authorize</button>
</form>
<form method="post" action="/oauth2/authorize" class="inline" id="deny-form">
${hidden({ ...fields, _method: 'delete', authenticity_token: denyCsrf })}
<button type="submit" id="deny" name="commit" value="Deny">Deny</button>
</form>`,
  );
}

/** The error page for a bad authorization request: HTTP 200, never a redirect (Doorkeeper). */
export function renderAuthorizeErrorPage(error: string, description: string): string {
  return layout(
    'An error has occurred',
    `<h1>An error has occurred</h1>
<p id="error" data-error="${escapeHtml(error)}">${escapeHtml(description)}</p>`,
  );
}
