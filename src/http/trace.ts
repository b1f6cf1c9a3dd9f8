import type { HttpRequestInit, HttpResponse } from './http-types.js';
import { redactBody, redactHeader, redactUrl, type SecretScrubber } from './redact.js';

/** Longest body shown in the trace, in characters. */
const TRACE_BODY_CHARS = 4096;

function traceBody(trace: (line: string) => void, prefix: string, text: string): void {
  if (text === '') return;
  const shown =
    text.length > TRACE_BODY_CHARS ? `${text.slice(0, TRACE_BODY_CHARS)}… (${text.length} characters in all)` : text;
  for (const line of shown.split(/\r?\n/)) {
    trace(`${prefix} ${line}`);
  }
}

/** Traces a request (`> ` lines): method and URL, header fields and body, secrets redacted. */
export function traceRequest(
  trace: (line: string) => void,
  scrubber: SecretScrubber,
  url: string,
  init: HttpRequestInit,
): void {
  // Headers and body first: redacting them teaches the scrubber the secrets the URL might repeat.
  const headers = Object.entries(init.headers ?? {}).map(
    ([name, value]) => `> ${name}: ${redactHeader(name, value, scrubber)}`,
  );
  const contentType = Object.entries(init.headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  const body =
    init.body === undefined
      ? ''
      : redactBody(String(init.body), contentType ?? 'application/x-www-form-urlencoded', scrubber);
  trace(`> ${init.method} ${scrubber.scrub(redactUrl(url, scrubber))}`);
  for (const line of headers) trace(scrubber.scrub(line));
  traceBody(trace, '>', body);
}

/** Traces a response (`< ` lines): status, time in ms, size, header fields and body, secrets redacted. */
export function traceResponse(
  trace: (line: string) => void,
  scrubber: SecretScrubber,
  response: HttpResponse,
  elapsedMs: number,
): void {
  const reason = response.statusText === '' ? '' : ` ${response.statusText}`;
  trace(`< ${response.status}${reason} (${Math.round(elapsedMs)} ms, ${response.body.byteLength} bytes)`);
  for (const [name, value] of Object.entries(response.headers)) {
    const shown = name === 'location' ? redactUrl(value, scrubber) : redactHeader(name, value, scrubber);
    trace(scrubber.scrub(`< ${name}: ${shown}`));
  }
  traceBody(
    trace,
    '<',
    redactBody(new TextDecoder().decode(response.body), response.headers['content-type'], scrubber),
  );
}
