/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The verdict a callback page shows. */
export interface CallbackPage {
  isSuccess: boolean;
  title: string;
  /** Plain text; escaped here. */
  detail: string;
}

/**
 * A self-contained HTML page (no external resources, inline style only) telling the person in the
 * browser what happened; every dynamic part is escaped.
 */
export function renderCallbackPage(page: CallbackPage): string {
  const colour = page.isSuccess ? '#1a7f37' : '#cf222e';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>mmauth: ${escapeHtml(page.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem;color:${colour}}p{color:#59636e}</style></head>
<body><h1 id="result" data-result="${page.isSuccess ? 'success' : 'error'}">${escapeHtml(page.title)}</h1>
<p id="detail">${escapeHtml(page.detail)}</p>
<p>You can close this window and return to the terminal.</p></body></html>
`;
}
