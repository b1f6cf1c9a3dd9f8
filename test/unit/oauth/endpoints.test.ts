import { describe, expect, it } from 'vitest';
import { isLoopbackHost, resolveEndpoints } from '../../../src/oauth/endpoints.js';
import { failureOf, thrownBy } from '../../support/failure.js';

describe('resolveEndpoints: https unless loopback (spec §4)', () => {
  it.each([
    ['https://maps.example.com', 'https://maps.example.com/oauth2/token'],
    ['https://maps.example.com/', 'https://maps.example.com/oauth2/token'],
    ['https://example.com/api/', 'https://example.com/api/oauth2/token'],
    ['http://127.0.0.1:4010', 'http://127.0.0.1:4010/oauth2/token'],
    ['http://127.8.9.10', 'http://127.8.9.10/oauth2/token'],
    ['http://localhost:3000', 'http://localhost:3000/oauth2/token'],
    ['http://[::1]:4010', 'http://[::1]:4010/oauth2/token'],
  ])('accepts %s', (baseUrl, token) => {
    const endpoints = resolveEndpoints(baseUrl);
    expect(endpoints.token.href).toBe(token);
    expect(endpoints.tokenInfo.href).toBe(token.replace(/token$/, 'token/info'));
  });

  it.each([
    ['http://maps.example.com', /refusing plain http/],
    ['http://128.0.0.1', /refusing plain http/],
    ['http://localhost.example.com', /refusing plain http/],
    ['ftp://127.0.0.1', /must use https/],
    ['maps.example.com', /not an absolute URL/],
    ['https://user:pw@maps.example.com', /credentials/],
    ['https://maps.example.com/?x=1', /query/],
  ])('refuses %s', (baseUrl, message) => {
    expect(failureOf(thrownBy(() => resolveEndpoints(baseUrl))).exitCode).toBe(2);
    expect(() => resolveEndpoints(baseUrl)).toThrow(message);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['LOCALHOST', true],
    ['[::1]', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['127.0.0.1.nip.io', false],
  ])('isLoopbackHost(%s) is %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});
