/** Client id and secret of an HTTP Basic credential (RFC 6749 §2.3.1: each form-urlencoded first). */
export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
}

function formDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * Decodes an `Authorization: Basic …` header value (RFC 7617 §2, RFC 6749 §2.3.1); undefined when
 * it is not Basic, has no colon, or a part is not valid form encoding.
 */
export function decodeBasicCredentials(header: string | undefined): BasicCredentials | undefined {
  const match = /^basic\s+(\S+)\s*$/i.exec(header ?? '');
  if (match?.[1] === undefined) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  return clientId === undefined || clientSecret === undefined ? undefined : { clientId, clientSecret };
}
