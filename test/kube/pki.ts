/**
 * The control plane's certificates, made with the openssl command line (Node has no X.509 writer):
 * a CA, the API server's serving certificate for 127.0.0.1, client certificates for the admin
 * (`system:masters`) and the controller manager, and the ServiceAccount token signing key pair.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly saKey: string;
  readonly saPub: string;
  /** Client certificate and key files by user: `admin`, `kcm`. */
  readonly clients: Readonly<Record<'admin' | 'kcm', { cert: string; key: string }>>;
}

const EXTENSIONS = `[req]
distinguished_name=dn
[dn]
[server]
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc
[client]
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
`;

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function signed(dir: string, name: string, subject: string, extensions: 'server' | 'client'): { cert: string; key: string } {
  openssl(dir, ['genrsa', '-out', `${name}.key`, '2048']);
  openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`, '-config', 'ext.cnf']);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    'ext.cnf',
    '-extensions',
    extensions,
    '-out',
    `${name}.crt`,
  ]);
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/** Makes every file in `dir` (created if needed). */
export function makePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'ext.cnf'), EXTENSIONS);
  openssl(dir, ['genrsa', '-out', 'ca.key', '2048']);
  openssl(dir, [
    'req',
    '-x509',
    '-new',
    '-nodes',
    '-key',
    'ca.key',
    '-subj',
    '/CN=tidb-gitops-test-ca',
    '-days',
    '30',
    '-out',
    'ca.crt',
    '-config',
    'ext.cnf',
  ]);
  const server = signed(dir, 'apiserver', '/CN=kube-apiserver', 'server');
  const admin = signed(dir, 'admin', '/CN=test-admin/O=system:masters', 'client');
  const kcm = signed(dir, 'kcm', '/CN=system:kube-controller-manager', 'client');
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: server.cert,
    serverKey: server.key,
    saKey: join(dir, 'sa.key'),
    saPub: join(dir, 'sa.pub'),
    clients: { admin, kcm },
  };
}

/** A kubeconfig for a client certificate or a bearer token. */
export function kubeconfig(server: string, caCert: string, user: { cert: string; key: string } | { token: string }): string {
  const b64 = (file: string) => readFileSync(file).toString('base64');
  const auth =
    'token' in user ? `    token: ${user.token}` : `    client-certificate-data: ${b64(user.cert)}\n    client-key-data: ${b64(user.key)}`;
  return `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: ${server}
    certificate-authority-data: ${b64(caCert)}
users:
- name: test
  user:
${auth}
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`;
}
