// A program that never handles a 401 itself: relative paths go to the profile's server with its token.
import { createTokenSource } from 'mmauth';

const maps = createTokenSource({ profile: process.env.MMAUTH_PROFILE ?? 'default' });
const me = await maps.fetch('/api/me');
const echo = await maps.fetch('/api/echo', { method: 'POST', body: JSON.stringify({ title: 'Plans' }) });
console.log(JSON.stringify({ me: me.status, echo: echo.status, headers: Object.keys(await maps.getHeaders()) }));
