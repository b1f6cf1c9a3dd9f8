/** One HTTP request, in the shape oauth4webapi's `customFetch` hands over. */
export interface HttpRequestInit {
  method: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams | undefined;
  redirect?: 'manual';
  signal?: AbortSignal | undefined;
}

/** An HTTP response, read whole: status, header fields (lower-case names) and the body's bytes. */
export interface HttpResponse {
  status: number;
  statusText: string;
  /** Lower-case field names; repeated fields joined with ", " (RFC 9110 §5.3). */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A request through mmauth's transport: per-request timeout, no redirects followed, body read whole. */
export type HttpFetch = (url: string, init: HttpRequestInit) => Promise<HttpResponse>;

/** The transport every server request goes through. */
export interface HttpClient {
  fetch: HttpFetch;
}

/** One exchange on a transport: the response read whole, or a throw (`response_too_large` past `maxBodyBytes`). */
export type Transport = (
  url: URL,
  init: HttpRequestInit,
  body: string | undefined,
  signal: AbortSignal,
  maxBodyBytes: number,
  label: string,
) => Promise<HttpResponse>;
