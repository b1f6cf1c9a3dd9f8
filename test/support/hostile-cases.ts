/** Misbehaving answers at the token, token info and revoke endpoints, shared by the e2e and exchange suites. */
import { answer, json, neverAnswer, resetConnection, stallBody, type Behaviour } from './hostile-server.js';

export const GOOD_TOKEN = {
  access_token: 'fresh-token-0123456789abcdef',
  token_type: 'Bearer',
  expires_in: 7200,
  scope: 'service',
};
export const GOOD_INFO = {
  resource_owner_id: 42,
  scope: ['service'],
  expires_in_seconds: 7000,
  application: { uid: 1 },
};

export type Command = 'client-credentials' | 'info' | 'revoke';
export const ROUTE = {
  token: 'POST /oauth2/token',
  info: 'GET /oauth2/token/info',
  revoke: 'POST /oauth2/revoke',
} as const;
export const COMMAND_FOR = { token: 'client-credentials', info: 'info', revoke: 'revoke' } as const satisfies Record<
  keyof typeof ROUTE,
  Command
>;

const big = JSON.stringify({ ...GOOD_TOKEN, padding: 'x'.repeat(1_200_000) });
const invalidUtf8 = Buffer.concat([
  Buffer.from('{"access_token":"abc'),
  Buffer.from([0xff, 0xfe]),
  Buffer.from('def","token_type":"Bearer"}'),
]);
const invalidUtf8Scope = Buffer.concat([
  Buffer.from('{"access_token":"abcdef0123456789","token_type":"Bearer","scope":"service'),
  Buffer.from([0xc3, 0x28]),
  Buffer.from('"}'),
]);
const invalidUtf8Info = Buffer.concat([
  Buffer.from('{"resource_owner_id":42,"scope":["serv'),
  Buffer.from([0xe2, 0x82]),
  Buffer.from('"],"expires_in_seconds":1,"application":{"uid":1}}'),
]);

/** [what, endpoint, behaviour, exit code, what the error line must say]. */
export const CASES: Array<[string, keyof typeof ROUTE, Behaviour, number, RegExp]> = [
  [
    'an HTML page with status 200',
    'token',
    answer(200, '<html><body>Welcome</body></html>', 'text/html'),
    1,
    /token endpoint.*(content-type|HTML|not JSON)/i,
  ],
  ['a JSON content type over a non-JSON body', 'token', answer(200, 'hello'), 1, /token endpoint.*(not JSON|JSON)/i],
  ['truncated JSON', 'token', answer(200, '{"access_token":"abc'), 1, /token endpoint.*JSON/i],
  ['JSON that is an array', 'token', json([GOOD_TOKEN]), 1, /token endpoint.*(object|JSON)/i],
  ['JSON that is a string', 'token', json('token'), 1, /token endpoint.*(object|JSON)/i],
  ['an empty body', 'token', answer(200, ''), 1, /token endpoint.*(JSON|empty)/i],
  ['expires_in as a string', 'token', json({ ...GOOD_TOKEN, expires_in: '7200' }), 1, /token endpoint.*"expires_in"/],
  ['a negative expires_in', 'token', json({ ...GOOD_TOKEN, expires_in: -5 }), 1, /token endpoint.*"expires_in"/],
  ['a fractional expires_in', 'token', json({ ...GOOD_TOKEN, expires_in: 1.5 }), 1, /token endpoint.*"expires_in"/],
  ['a huge expires_in', 'token', json({ ...GOOD_TOKEN, expires_in: 1e15 }), 1, /token endpoint.*"expires_in"/],
  ['no access_token', 'token', json({ token_type: 'Bearer', expires_in: 7200 }), 1, /token endpoint.*"access_token"/],
  ['an empty access_token', 'token', json({ ...GOOD_TOKEN, access_token: '' }), 1, /token endpoint.*"access_token"/],
  [
    'a numeric access_token',
    'token',
    json({ ...GOOD_TOKEN, access_token: 12345 }),
    1,
    /token endpoint.*"access_token"/,
  ],
  [
    'no token_type',
    'token',
    json({ access_token: 'abcdef0123456789', expires_in: 7200 }),
    1,
    /token endpoint.*"?token_type"?/,
  ],
  ['token_type mac', 'token', json({ ...GOOD_TOKEN, token_type: 'mac' }), 1, /token endpoint.*(token_type|bearer)/i],
  ['a scope that is an array', 'token', json({ ...GOOD_TOKEN, scope: ['service'] }), 1, /token endpoint.*"scope"/],
  ['an error inside a 200', 'token', json({ error: 'invalid_client' }), 1, /token endpoint/],
  ['invalid UTF-8 in access_token', 'token', answer(200, invalidUtf8), 1, /token endpoint.*(UTF-8|access_token)/],
  ['invalid UTF-8 in scope', 'token', answer(200, invalidUtf8Scope), 1, /token endpoint.*UTF-8/],
  ['500 with no body', 'token', answer(500, '', 'text/plain'), 1, /token endpoint.*500/],
  [
    '500 with an OAuth error body',
    'token',
    json({ error: 'server_error', error_description: 'boom' }, 500),
    1,
    /token endpoint.*(500|server_error)/,
  ],
  ['502 with an HTML body', 'token', answer(502, '<html>Bad Gateway</html>', 'text/html'), 1, /token endpoint.*502/],
  ['503 with a text body', 'token', answer(503, 'maintenance', 'text/plain'), 1, /token endpoint.*503/],
  ['400 with a non-JSON body', 'token', answer(400, 'bad request', 'text/plain'), 1, /token endpoint.*400/],
  [
    'a 302 redirect elsewhere',
    'token',
    answer(302, '', 'text/plain', { location: '/elsewhere' }),
    1,
    /token endpoint.*(302|redirect)/i,
  ],
  [
    'a 307 redirect elsewhere',
    'token',
    answer(307, '', 'text/plain', { location: '/elsewhere' }),
    1,
    /token endpoint.*(307|redirect)/i,
  ],
  ['headers that never come', 'token', neverAnswer, 3, /POST .*\/oauth2\/token: no complete answer within 1 s/],
  ['a body that never ends', 'token', stallBody, 3, /POST .*\/oauth2\/token: no complete answer within 1 s/],
  ['a body over 1 MiB', 'token', answer(200, big), 1, /POST .*\/oauth2\/token: .*larger than 1024 KiB/],
  ['a connection reset', 'token', resetConnection, 3, /POST .*\/oauth2\/token: connection reset/],
  [
    'token info: an HTML page',
    'info',
    answer(200, '<html></html>', 'text/html'),
    1,
    /token info endpoint.*not application\/json/,
  ],
  ['token info: scope as a number', 'info', json({ ...GOOD_INFO, scope: 42 }), 1, /token info endpoint.*"scope"/],
  [
    'a scope with characters outside RFC 6749 §A.4',
    'token',
    json({ ...GOOD_TOKEN, scope: 'sérvice' }),
    1,
    /token endpoint.*"scope"/,
  ],
  [
    'token info: a negative lifetime',
    'info',
    json({ ...GOOD_INFO, expires_in_seconds: -1 }),
    1,
    /token info endpoint.*expires_in/,
  ],
  ['token info: invalid UTF-8', 'info', answer(200, invalidUtf8Info), 1, /token info endpoint.*UTF-8/],
  ['token info: 500', 'info', answer(500, 'oops', 'text/plain'), 1, /token info endpoint.*500/],
  [
    'token info: a 302 redirect',
    'info',
    answer(302, '', 'text/plain', { location: '/elsewhere' }),
    1,
    /token info endpoint.*302/,
  ],
  ['token info: a connection reset', 'info', resetConnection, 3, /GET .*\/oauth2\/token\/info: connection reset/],
  [
    'token info: headers that never come',
    'info',
    neverAnswer,
    3,
    /GET .*\/oauth2\/token\/info: no complete answer within 1 s/,
  ],
  ['revoke: 500', 'revoke', answer(500, '', 'text/plain'), 1, /revoke endpoint.*500/],
  ['revoke: 503 with HTML', 'revoke', answer(503, '<html>down</html>', 'text/html'), 1, /revoke endpoint.*503/],
  [
    'revoke: a 302 redirect',
    'revoke',
    answer(302, '', 'text/plain', { location: '/elsewhere' }),
    1,
    /revoke endpoint.*(302|redirect)/i,
  ],
  ['revoke: a connection reset', 'revoke', resetConnection, 3, /POST .*\/oauth2\/revoke: connection reset/],
  ['revoke: a body that never ends', 'revoke', stallBody, 3, /POST .*\/oauth2\/revoke: no complete answer within 1 s/],
];
