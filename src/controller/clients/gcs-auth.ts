/**
 * Access tokens for Google Cloud Storage from a service account key, the JSON file a storage Secret
 * holds under `credentials` (what tidb-operator and BR read with `--gcs.credentials-file`): a JWT
 * the key signs (RS256) is exchanged at the key's `token_uri` for a bearer token, by the JWT bearer
 * grant (RFC 7523, as Google's "Using OAuth 2.0 for Server to Server Applications" describes it).
 * The token is kept until shortly before it expires.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { ObjectStoreError, retrying, type RetryPolicy } from './object-store';

/** What a service account key file gives, as it is read. */
export interface ServiceAccountKey {
  /** `client_email`: the account the JWT speaks for. */
  readonly clientEmail: string;
  /** `private_key`, PEM. */
  readonly privateKey: string;
  /** `private_key_id`, named in the JWT's header. @default none */
  readonly privateKeyId?: string;
  /** `token_uri`. @default https://oauth2.googleapis.com/token */
  readonly tokenUri?: string;
}

/** Google's token endpoint, where a key names none. */
const TOKEN_URI = 'https://oauth2.googleapis.com/token';
/** Listing and deleting objects. */
export const STORAGE_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write';
/** How long a JWT asks its token to last: Google's maximum. */
const LIFETIME_S = 3600;
/** A token this close to its expiry is replaced before a request. */
const MARGIN_MS = 5 * 60_000;

/**
 * Reads a service account key file; `where` names it in errors (`the Secret gcs-secret's credentials`).
 * Other kinds of Google credentials (a user's `authorized_user`, workload identity federation's
 * `external_account`) are refused by name.
 */
export function parseServiceAccountKey(text: string, where: string): ServiceAccountKey {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${where} are not JSON: expected a service account key file`);
  }
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  if (o.type !== 'service_account') {
    throw new Error(
      `${where} are of type ${JSON.stringify(o.type ?? null)}: retention reads a service account key (type service_account), the kind BR's --gcs.credentials-file reads`,
    );
  }
  const field = (k: string) => {
    if (typeof o[k] !== 'string' || o[k] === '') throw new Error(`${where}: the service account key has no ${k}`);
    return o[k] as string;
  };
  const optional = (k: string) => (typeof o[k] === 'string' && o[k] !== '' ? (o[k] as string) : undefined);
  const privateKeyId = optional('private_key_id');
  const tokenUri = optional('token_uri');
  return {
    clientEmail: field('client_email'),
    privateKey: field('private_key'),
    ...(privateKeyId && { privateKeyId }),
    ...(tokenUri && { tokenUri }),
  };
}

export interface TokenSourceOptions {
  /** @default Date.now */
  readonly now?: () => number;
  /** @default 30000 */
  readonly timeoutMs?: number;
  /** @default the defaults of {@link retrying} */
  readonly retry?: RetryPolicy;
}

/** Bearer tokens for one service account, each fetched once and kept until near its expiry. */
export class GoogleTokenSource {
  private readonly key: KeyObject;
  private readonly now: () => number;
  private cached?: { readonly token: string; readonly expiresAt: number };
  private pending?: Promise<string>;

  constructor(
    private readonly account: ServiceAccountKey,
    private readonly options: TokenSourceOptions = {},
  ) {
    try {
      this.key = createPrivateKey(account.privateKey);
    } catch (e) {
      throw new Error(`the private_key of ${account.clientEmail} is not a PEM private key: ${(e as Error).message}`);
    }
    this.now = options.now ?? Date.now;
  }

  /** A token valid for at least a few more minutes. */
  async token(): Promise<string> {
    if (this.cached && this.now() < this.cached.expiresAt - MARGIN_MS) return this.cached.token;
    this.pending ??= this.exchange().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async exchange(): Promise<string> {
    const uri = this.account.tokenUri ?? TOKEN_URI;
    const issued = this.now();
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: this.assertion(uri, Math.floor(issued / 1000)),
    });
    const answer = await retrying(
      async () => {
        const res = await fetch(uri, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
        const text = await res.text();
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // An answer that is not JSON: its status says what went wrong.
        }
        if (res.status >= 300) {
          const why =
            typeof json.error === 'string'
              ? `${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}`
              : `HTTP ${res.status}`;
          throw new ObjectStoreError(`could not get a token for ${this.account.clientEmail} from ${uri}: ${why}`, res.status);
        }
        return json;
      },
      TOKEN_RETRIED,
      this.options.retry,
    );
    if (typeof answer.access_token !== 'string' || answer.access_token === '') throw new Error(`${uri} answered without an access_token`);
    const seconds = typeof answer.expires_in === 'number' ? answer.expires_in : LIFETIME_S;
    this.cached = { token: answer.access_token, expiresAt: issued + seconds * 1000 };
    return answer.access_token;
  }

  /** The signed JWT: `iss` the account, `aud` the token endpoint, for {@link STORAGE_SCOPE}. */
  private assertion(audience: string, iat: number): string {
    const header = { alg: 'RS256', typ: 'JWT', ...(this.account.privateKeyId && { kid: this.account.privateKeyId }) };
    const claims = { iss: this.account.clientEmail, scope: STORAGE_SCOPE, aud: audience, iat, exp: iat + LIFETIME_S };
    const data = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    return `${data}.${sign('RSA-SHA256', Buffer.from(data), this.key).toString('base64url')}`;
  }
}

/** The token endpoint's answers worth another try: its own failures and throttling. */
const TOKEN_RETRIED = new Set([429, 500, 502, 503, 504]);

function base64url(s: string): string {
  return Buffer.from(s).toString('base64url');
}
