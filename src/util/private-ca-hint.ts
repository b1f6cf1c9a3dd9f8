/**
 * The hint for a certificate no trusted CA signed (an intercepting proxy, a private CA): trust the
 * CA, never turn verification off. Names NODE_USE_SYSTEM_CA=1 where this Node can read the system's
 * store (where this Node has the `--use-system-ca` flag: 22 and 24 do, 20 does not).
 */
export function privateCaHint(allowedFlags: ReadonlySet<string> = process.allowedNodeEnvironmentFlags): string {
  const extra = 'point NODE_EXTRA_CA_CERTS at the certificate (PEM) of the CA that signs it';
  const system = allowedFlags.has('--use-system-ca')
    ? ", or trust the system's certificate store: NODE_USE_SYSTEM_CA=1 (NODE_OPTIONS=--use-system-ca where Node lacks that variable)"
    : '';
  return `a proxy or a private CA signed the certificate? ${extra}${system}`;
}
