/**
 * The Google Cloud Storage calls retention needs, on Node's own fetch and the JSON API: list the
 * objects under a prefix (`objects.list`, page by page) and delete them (`objects.delete`, one a
 * request, a few at a time), with a bearer token from `gcs-auth.ts`. A 429 or 5xx answer is sent
 * again after a jittered backoff, as Google's retry strategy asks.
 */
import { eachConcurrently, ObjectStoreError, retrying, type ObjectStore, type RetryPolicy } from './object-store';

export interface GcsTarget {
  readonly bucket: string;
  /** The JSON API's root, without `/storage/v1` (an emulator's address). @default https://storage.googleapis.com */
  readonly endpoint?: string;
}

export interface GcsOptions {
  /** Objects a list page asks for (`maxResults`). @default 1000 (the API's maximum) */
  readonly pageSize?: number;
  /** Deletes under way at once. @default 8 */
  readonly concurrency?: number;
  /** @default 30000 */
  readonly timeoutMs?: number;
  /** @default the defaults of {@link retrying} */
  readonly retry?: RetryPolicy;
}

/** Google's "Retry strategy": request timeouts, throttling and server errors. */
const RETRIED = new Set([408, 429, 500, 502, 503, 504]);

export class GcsClient implements ObjectStore {
  private readonly base: string;

  constructor(
    private readonly target: GcsTarget,
    private readonly auth: { token(): Promise<string> },
    private readonly options: GcsOptions = {},
  ) {
    this.base = `${(target.endpoint || 'https://storage.googleapis.com').replace(/\/+$/, '')}/storage/v1/b/${encodeURIComponent(target.bucket)}/o`;
  }

  async list(prefix: string): Promise<string[]> {
    const names: string[] = [];
    let pageToken: string | undefined;
    do {
      const query = new URLSearchParams({
        prefix,
        maxResults: String(this.options.pageSize ?? 1000),
        fields: 'items(name),nextPageToken',
        ...(pageToken && { pageToken }),
      });
      const page = JSON.parse(await this.send('GET', `${this.base}?${query}`)) as { items?: { name?: unknown }[]; nextPageToken?: unknown };
      for (const item of page.items ?? []) if (typeof item.name === 'string') names.push(item.name);
      pageToken = typeof page.nextPageToken === 'string' && page.nextPageToken !== '' ? page.nextPageToken : undefined;
    } while (pageToken);
    return names;
  }

  async delete(keys: readonly string[]): Promise<void> {
    await eachConcurrently(keys, this.options.concurrency ?? 8, async (key) => {
      try {
        await this.send('DELETE', `${this.base}/${encodeURIComponent(key)}`);
      } catch (e) {
        if (e instanceof ObjectStoreError && e.status === 404) return;
        throw e;
      }
    });
  }

  private send(method: 'GET' | 'DELETE', url: string): Promise<string> {
    return retrying(
      async () => {
        const res = await fetch(url, {
          method,
          headers: { authorization: `Bearer ${await this.auth.token()}` },
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
        const text = await res.text();
        if (res.status >= 300)
          throw new ObjectStoreError(`${method} gcs://${this.target.bucket}: ${errorOf(text, res.status)}`, res.status);
        return text;
      },
      RETRIED,
      this.options.retry,
    );
  }
}

/** The JSON API's error (`{"error": {"code", "message"}}`), or the status where the body is not one. */
function errorOf(body: string, status: number): string {
  try {
    const e = (JSON.parse(body) as { error?: { message?: unknown } }).error;
    if (typeof e?.message === 'string') return `HTTP ${status}: ${e.message}`;
  } catch {
    // Not JSON: a proxy's page, or nothing.
  }
  return `HTTP ${status}${body.trim() ? `: ${body.trim().slice(0, 200)}` : ''}`;
}
