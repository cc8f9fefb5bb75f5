/**
 * Google's side of a service account's sign-in, for tests, on loopback: a token endpoint that takes
 * the JWT bearer grant (RFC 7523 section 2.1, as Google's "Using OAuth 2.0 for Server to Server
 * Applications" specifies it: `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, an RS256 JWT
 * with `iss`, `scope`, `aud`, `iat`, `exp` of at most an hour) and answers as RFC 6749 section 5 does
 * (`access_token`, `token_type`, `expires_in`; `{"error": "invalid_grant"}` with 400 otherwise), the
 * JWT's signature checked with the public half of a key pair made here. And a front for a storage
 * emulator that checks no credentials: it passes on only requests with a token issued here, and
 * answers others 401 as GCS does.
 */
import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CLIENT_EMAIL = 'retention@test-project.iam.gserviceaccount.com';
export const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const STORAGE_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write';

export interface GoogleAuth {
  /** `http://127.0.0.1:<port>/token` */
  readonly tokenUri: string;
  /** A service account key file for the account, its private key the one the endpoint checks against unless another is given. */
  credentials(opts?: { privateKey?: string }): string;
  /** Token requests answered, good or bad. */
  readonly requests: number;
  /** Tokens issued, each `expires_in` as set. */
  readonly issued: readonly string[];
  /** The lifetime the next tokens are issued with, seconds. @default 3600 */
  expiresIn: number;
  /** A front for `upstream` that lets through only requests bearing a token issued here: its address. */
  front(upstream: string): Promise<string>;
  stop(): Promise<void>;
}

/** A 2048-bit RSA key pair, PEM (PKCS #8, as Google's key files hold it). */
export function rsaKeyPair(): { privateKey: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

export async function startGoogleAuth(): Promise<GoogleAuth> {
  const { privateKey, publicKey } = rsaKeyPair();
  const servers: Server[] = [];
  const state = { requests: 0, issued: [] as string[], expiresIn: 3600 };
  const tokenServer = createServer(async (req, res) => {
    const body = new URLSearchParams(await text(req));
    state.requests++;
    const refuse = (description: string) => {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'invalid_grant', error_description: description }));
    };
    if (req.method !== 'POST' || req.url !== '/token') return void res.writeHead(404).end();
    if (body.get('grant_type') !== GRANT_TYPE)
      return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unsupported_grant_type' }));
    const parts = (body.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return refuse('Invalid JWT.');
    const [header, claims] = parts
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>);
    if (header.alg !== 'RS256') return refuse('Invalid JWT: alg.');
    if (!verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], 'base64url')))
      return refuse('Invalid JWT Signature.');
    const now = Math.floor(Date.now() / 1000);
    const [iat, exp] = [Number(claims.iat), Number(claims.exp)];
    if (claims.iss !== CLIENT_EMAIL) return refuse('Invalid JWT: iss.');
    if (claims.aud !== auth.tokenUri) return refuse('Invalid JWT: aud.');
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(STORAGE_SCOPE)) return refuse('Invalid JWT: scope.');
    if (!(iat <= now + 60 && exp > now && exp - iat <= 3600))
      return refuse('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    const token = `ya29.test-${state.issued.length + 1}`;
    state.issued.push(token);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: state.expiresIn }));
  });
  const tokenPort = await listen(tokenServer);
  servers.push(tokenServer);
  const auth: GoogleAuth = {
    tokenUri: `http://127.0.0.1:${tokenPort}/token`,
    credentials: (opts = {}) =>
      JSON.stringify({
        type: 'service_account',
        project_id: 'test-project',
        private_key_id: 'k1',
        private_key: opts.privateKey ?? privateKey,
        client_email: CLIENT_EMAIL,
        client_id: '1',
        token_uri: auth.tokenUri,
      }),
    get requests() {
      return state.requests;
    },
    get issued() {
      return state.issued;
    },
    get expiresIn() {
      return state.expiresIn;
    },
    set expiresIn(s: number) {
      state.expiresIn = s;
    },
    async front(upstream) {
      const target = new URL(upstream);
      const server = createServer((req, res) => {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (token === undefined || !state.issued.includes(token)) {
          req.resume();
          return void res
            .writeHead(401, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { code: 401, message: 'Invalid Credentials' } }));
        }
        const out = request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.on('error', () => res.writeHead(502).end());
        req.pipe(out);
      });
      const port = await listen(server);
      servers.push(server);
      return `http://127.0.0.1:${port}`;
    },
    async stop() {
      await Promise.all(servers.map((s) => new Promise((r) => (s.close(r), s.closeAllConnections()))));
    },
  };
  return auth;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function text(req: IncomingMessage): Promise<string> {
  let out = '';
  for await (const chunk of req) out += chunk;
  return out;
}
