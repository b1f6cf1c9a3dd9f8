import { describe, expect, it } from 'vitest';
import { methodOverride } from '../../../src/loopback/method-override.js';

const allowed = new Set(['GET', 'POST']);
const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
const bytes = (text: string) => new TextEncoder().encode(text);

describe('methodOverride', () => {
  it('names an override header or a _method form field that asks for a method left out', () => {
    expect(methodOverride({ 'x-http-method-override': 'DELETE' }, undefined, allowed)).toBe(
      'x-http-method-override: DELETE',
    );
    expect(methodOverride({ 'x-method-override': ' patch ' }, undefined, allowed)).toContain('patch');
    expect(methodOverride(form, bytes('a=1&_method=Delete'), allowed)).toBe('_method=Delete');
    expect(
      methodOverride(
        { 'content-type': 'multipart/form-data; boundary=b' },
        bytes('--b\r\nContent-Disposition: form-data; name="_method"\r\n\r\nPUT\r\n--b--'),
        allowed,
      ),
    ).toBe('a _method form field');
    expect(methodOverride(form, undefined, allowed)).toBe('a form body too large to check for _method');
  });

  it('reads names and bodies as Rack does (P10): underscores for hyphens, a body without a media type as a form', () => {
    expect(methodOverride({ x_http_method_override: 'DELETE' }, undefined, allowed)).toBe(
      'x_http_method_override: DELETE',
    );
    expect(methodOverride({ 'X_HTTP-Method': 'put' }, undefined, allowed)).toBe('X_HTTP-Method: put');
    expect(methodOverride({}, bytes('_method=delete'), allowed)).toBe('_method=delete');
    expect(methodOverride({ 'content-type': '' }, bytes('_method=delete'), allowed)).toBe('_method=delete');
    expect(methodOverride({ 'content-type': '; charset=utf-8' }, bytes('_method=delete'), allowed)).toBe(
      '_method=delete',
    );
    expect(methodOverride({}, bytes('name=x'), allowed)).toBeUndefined();
  });

  it('lets through what asks for nothing else: no override, an allowed one, a body that is no form', () => {
    expect(methodOverride({ 'x-http-method-override': 'get' }, bytes(''), allowed)).toBeUndefined();
    expect(methodOverride(form, bytes('a=1&_method=post'), allowed)).toBeUndefined();
    expect(
      methodOverride({ 'content-type': 'application/json' }, bytes('{"_method":"DELETE"}'), allowed),
    ).toBeUndefined();
  });
});
