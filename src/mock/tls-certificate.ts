/** A throwaway certificate for https mock nodes: CN localhost, SAN localhost/127.0.0.1/::1. */

/** PEM certificate and key. */
export interface TlsCertificate {
  readonly cert: string;
  readonly key: string;
}

const VALID_DAYS = 30;

/** Generates a self-signed EC P-256 certificate (fast; a client trusts it by passing it as CA). */
export async function generateTlsCertificate(): Promise<TlsCertificate> {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + VALID_DAYS * 86_400_000);
  // Loaded on first use: only https nodes need it.
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
