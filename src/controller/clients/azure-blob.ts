/**
 * The Azure Blob Storage calls retention needs, on Node's own fetch and the Blob service REST API:
 * List Blobs under a prefix (page by page, by `marker`) and Delete Blob (one a request, a few at a
 * time, with its snapshots), authorized as tidb-operator's cleaner can be: with the account's shared
 * key (the Shared Key scheme of "Authorize with Shared Key": an HMAC-SHA256 of the canonical request)
 * or with a SAS token appended to each request. A 500 or 503 answer is sent again after a jittered
 * backoff, as Azure Storage asks of its clients.
 */
import { createHmac } from 'node:crypto';
import { eachConcurrently, ObjectStoreError, retrying, type ObjectStore, type RetryPolicy } from './object-store';

/** How requests are authorized: the account's key, or a shared access signature. */
export type AzureCredential = { readonly sharedKey: string } | { readonly sasToken: string };

export interface AzureBlobTarget {
  /** The storage account. */
  readonly account: string;
  readonly container: string;
  /**
   * The account's Blob service URL (for Azurite `http://127.0.0.1:10000/devstoreaccount1`).
   * @default `https://<account>.blob.core.windows.net`
   */
  readonly endpoint?: string;
}

export interface AzureBlobOptions {
  /** Blobs a list page asks for (`maxresults`). @default 5000 (the service's maximum) */
  readonly pageSize?: number;
  /** Deletes under way at once. @default 8 */
  readonly concurrency?: number;
  /** @default 30000 */
  readonly timeoutMs?: number;
  /** @default the defaults of {@link retrying} */
  readonly retry?: RetryPolicy;
}

/** The REST API version asked for; Azurite 3.37 and every Azure region serve it. */
const API_VERSION = '2023-11-03';
/** InternalError and ServerBusy / OperationTimedOut. */
const RETRIED = new Set([500, 503]);

export class AzureBlobClient implements ObjectStore {
  private readonly base: URL;

  constructor(
    private readonly target: AzureBlobTarget,
    private readonly credential: AzureCredential,
    private readonly options: AzureBlobOptions = {},
  ) {
    const endpoint = (target.endpoint || `https://${target.account}.blob.core.windows.net`).replace(/\/+$/, '');
    this.base = new URL(`${endpoint}/${encodeURIComponent(target.container)}`);
  }

  async list(prefix: string): Promise<string[]> {
    const names: string[] = [];
    let marker: string | undefined;
    do {
      const query = {
        restype: 'container',
        comp: 'list',
        prefix,
        maxresults: String(this.options.pageSize ?? 5000),
        ...(marker && { marker }),
      };
      const xml = await this.send('GET', '', query);
      for (const m of xml.matchAll(/<Blob>\s*<Name( Encoded="true")?>([^<]*)<\/Name>/g)) {
        const name = unescapeXml(m[2]);
        names.push(m[1] ? decodeURIComponent(name) : name);
      }
      const next = /<NextMarker>([^<]*)<\/NextMarker>/.exec(xml)?.[1];
      marker = next ? unescapeXml(next) : undefined;
    } while (marker);
    return names;
  }

  async delete(keys: readonly string[]): Promise<void> {
    await eachConcurrently(keys, this.options.concurrency ?? 8, async (key) => {
      try {
        await this.send('DELETE', `/${key.split('/').map(encodeURIComponent).join('/')}`, {}, { 'x-ms-delete-snapshots': 'include' });
      } catch (e) {
        if (e instanceof ObjectStoreError && e.status === 404) return;
        throw e;
      }
    });
  }

  private send(method: 'GET' | 'DELETE', path: string, query: Record<string, string>, extra: Record<string, string> = {}): Promise<string> {
    return retrying(
      async () => {
        const url = new URL(this.base);
        url.pathname += path;
        url.search = new URLSearchParams(query).toString();
        const headers: Record<string, string> = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': API_VERSION, ...extra };
        if ('sasToken' in this.credential) {
          const sas = this.credential.sasToken.replace(/^\?/, '');
          url.search = url.search ? `${url.search}&${sas}` : `?${sas}`;
        } else {
          headers.authorization = `SharedKey ${this.target.account}:${sharedKeySignature(this.target.account, this.credential.sharedKey, method, url, headers)}`;
        }
        const res = await fetch(url, { method, headers, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
        const text = await res.text();
        if (res.status >= 300) throw new ObjectStoreError(`${method} azure://${this.target.container}: ${errorOf(text, res)}`, res.status);
        return text;
      },
      RETRIED,
      this.options.retry,
    );
  }
}

/** The standard headers a Shared Key signature covers, in its order (Blob service, version 2015-02-21 and later). */
const SIGNED_HEADERS = [
  'content-encoding',
  'content-language',
  'content-length',
  'content-md5',
  'content-type',
  'date',
  'if-modified-since',
  'if-match',
  'if-none-match',
  'if-unmodified-since',
  'range',
];

/**
 * The Shared Key signature of a request whose headers (lower-case names) are `headers`: the verb,
 * the standard headers (a zero Content-Length signed as empty), the `x-ms-` headers sorted, then
 * `/<account><path>` and each query parameter as `name:value`, sorted by name.
 */
export function sharedKeySignature(
  account: string,
  key: string,
  method: string,
  url: URL,
  headers: Readonly<Record<string, string>>,
): string {
  const standard = SIGNED_HEADERS.map((h) => (h === 'content-length' && headers[h] === '0' ? '' : (headers[h] ?? '')));
  const msHeaders = Object.keys(headers)
    .filter((h) => h.startsWith('x-ms-'))
    .sort()
    .map((h) => `${h}:${headers[h].trim()}\n`)
    .join('');
  const params = [...new Set(url.searchParams.keys())].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
  const resource = `/${account}${url.pathname}${params.map((p) => `\n${p.toLowerCase()}:${url.searchParams.getAll(p).sort().join(',')}`).join('')}`;
  const toSign = `${method}\n${standard.map((v) => `${v}\n`).join('')}${msHeaders}${resource}`;
  return createHmac('sha256', Buffer.from(key, 'base64')).update(toSign, 'utf8').digest('base64');
}

/** The service's error code and the first line of its message, else the status. */
function errorOf(xml: string, res: Response): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1] ?? res.headers.get('x-ms-error-code') ?? `HTTP ${res.status}`;
  const message = /<Message>([^<]*)<\/Message>/.exec(xml)?.[1]?.split('\n')[0];
  return `${code}${message ? `: ${unescapeXml(message)}` : ''}`;
}

function unescapeXml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
}
