/** The hint for a certificate no trusted CA signed: trust the CA, by the means this Node has. */
import { describe, expect, it } from 'vitest';
import { privateCaHint } from '../../../src/util/private-ca-hint.js';

describe('privateCaHint', () => {
  it('names NODE_USE_SYSTEM_CA=1 where Node has --use-system-ca (22, 24), NODE_EXTRA_CA_CERTS always', () => {
    const withSystemCa = privateCaHint(new Set(['--use-system-ca']));
    expect(withSystemCa).toContain('NODE_EXTRA_CA_CERTS');
    expect(withSystemCa).toContain('NODE_USE_SYSTEM_CA=1');
    const node20 = privateCaHint(new Set());
    expect(node20).toContain('NODE_EXTRA_CA_CERTS');
    expect(node20).not.toContain('NODE_USE_SYSTEM_CA');
    for (const hint of [withSystemCa, node20]) expect(hint).not.toMatch(/REJECT_UNAUTHORIZED|insecure/i);
  });
});
