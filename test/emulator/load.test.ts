/**
 * The emulator under load: 200 concurrent clients on loopback for LOAD_SECONDS (default 5) mix
 * client-credentials grants, token info, wrong secrets and authorization requests; every answer must
 * be the correct one. Then the clock moves on and expired codes and tokens must be gone from memory.
 */
import { Agent, fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { startTestEmulator } from '../support/emulator.js';

const CLIENTS = 200;
const SECONDS = Number(process.env.LOAD_SECONDS ?? 5);

describe('emulator under load', () => {
  it(
    `${CLIENTS} concurrent clients for ${SECONDS} s get only correct answers, and memory stays bounded`,
    async () => {
      const emulator = await startTestEmulator({ tokenTtlS: 60, autoApprove: true });
      const { clientId, clientSecret } = emulator.client;
      const dispatcher = new Agent({ connections: CLIENTS, keepAliveTimeout: 10_000 });
      const tally = { grants: 0, infos: 0, refusals: 0, codes: 0, wrong: [] as string[] };
      const note = (what: string) => tally.wrong.length < 20 && tally.wrong.push(what);
      const deadline = Date.now() + SECONDS * 1000;
      let peakTokens = 0;

      const client = async (n: number) => {
        for (let i = 0; Date.now() < deadline; i++) {
          const kind = (n + i) % 10;
          if (kind === 0) {
            const response = await fetch(`${emulator.baseUrl}/oauth2/token`, {
              method: 'POST',
              dispatcher,
              body: new URLSearchParams({
                grant_type: 'client_credentials',
                client_id: clientId,
                client_secret: 'wrong',
              }),
            });
            const body = (await response.json()) as { error?: string };
            if (response.status === 401 && body.error === 'invalid_client') tally.refusals++;
            else note(`wrong secret → ${response.status} ${JSON.stringify(body)}`);
            continue;
          }
          if (kind === 1) {
            const url = new URL(`${emulator.baseUrl}/oauth2/authorize`);
            url.search = new URLSearchParams({
              response_type: 'code',
              client_id: clientId,
              redirect_uri: `http://127.0.0.1:${1000 + n}/callback`,
              scope: 'service',
              state: `s${n}-${i}`,
            }).toString();
            const response = await fetch(url, { dispatcher, redirect: 'manual' });
            await response.body?.cancel();
            const location = new URL(response.headers.get('location') ?? 'http://invalid/');
            if (
              response.status === 302 &&
              location.searchParams.get('state') === `s${n}-${i}` &&
              /^[\w-]{43}$/.test(location.searchParams.get('code') ?? '')
            )
              tally.codes++;
            else note(`authorize → ${response.status} ${location.href}`);
            continue;
          }
          const response = await fetch(`${emulator.baseUrl}/oauth2/token`, {
            method: 'POST',
            dispatcher,
            body: new URLSearchParams({
              grant_type: 'client_credentials',
              client_id: clientId,
              client_secret: clientSecret,
              scope: 'service',
            }),
          });
          const token = (await response.json()) as {
            access_token?: string;
            token_type?: string;
            expires_in?: number;
            scope?: string;
          };
          if (
            response.status !== 200 ||
            !/^[\w-]{43}$/.test(token.access_token ?? '') ||
            token.token_type !== 'bearer' ||
            token.expires_in !== 60 ||
            token.scope !== 'service'
          ) {
            note(`grant → ${response.status} ${JSON.stringify(token)}`);
            continue;
          }
          tally.grants++;
          if (kind === 2) {
            const info = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
              dispatcher,
              headers: { authorization: `Bearer ${token.access_token}` },
            });
            const record = (await info.json()) as {
              resource_owner_id?: unknown;
              scope?: string[];
              application?: { uid?: number };
            };
            if (
              info.status === 200 &&
              record.resource_owner_id === null &&
              record.scope?.join(' ') === 'service' &&
              record.application?.uid === 1
            )
              tally.infos++;
            else note(`info → ${info.status} ${JSON.stringify(record)}`);
          }
          peakTokens = Math.max(peakTokens, emulator.state.sizes().tokens);
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
      await dispatcher.close();

      const served = tally.grants + tally.infos + tally.refusals + tally.codes;
      console.info(
        `emulator load: ${served} requests answered correctly in ${SECONDS} s by ${CLIENTS} clients (${Math.round(served / SECONDS)}/s): ${JSON.stringify({ ...tally, wrong: tally.wrong.length, peakTokens })}`,
      );
      expect(tally.wrong).toEqual([]);
      expect(tally.grants).toBeGreaterThan(CLIENTS);
      expect(tally.codes).toBeGreaterThan(0);
      expect(emulator.state.sizes().codes).toBe(tally.codes);

      // Past the codes' 600 s and an hour past the tokens' death (their records are kept that long,
      // so that a 401 can say why): the next request purges them all.
      emulator.advanceSeconds(60 + 3601);
      const after = await globalThis.fetch(`${emulator.baseUrl}/oauth2/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
        }),
      });
      expect(after.status).toBe(200);
      expect(emulator.state.sizes()).toMatchObject({ codes: 0, tokens: 2 });
    },
    (SECONDS + 30) * 1000,
  );
});
