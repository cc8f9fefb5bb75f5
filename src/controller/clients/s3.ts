/**
 * The S3 calls retention needs, on Node's own fetch: list the objects under a prefix
 * (ListObjectsV2, page by page) and delete them (DeleteObjects, 1,000 keys a request, as tidb-operator's
 * clean job batches them), signed with AWS Signature Version 4. Path-style addressing unless
 * `forcePathStyle: false`, as BR and tidb-operator address a bucket.
 *
 * Both calls are idempotent, so an answer S3 asks to be retried (500 InternalError "Please try
 * again", 503 SlowDown or ServiceUnavailable) is sent again, signed anew, after a jittered backoff,
 * up to four attempts in all, as AWS's SDKs do.
 *
 * The signing region is chosen as BR chooses it (pingcap/tidb br/pkg/storage/s3.go `NewS3Storage`):
 * see {@link regionSource}. A bucket's region is asked of S3 once per controller process.
 */
import { createHash, createHmac } from 'node:crypto';
import type { BucketKeys } from './backups';

export interface S3Target {
  readonly bucket: string;
  /** @default `https://s3.<region>.amazonaws.com` */
  readonly endpoint?: string;
  /**
   * The region requests are signed for.
   * @default the bucket's own region, asked of S3, when `provider` is empty or `aws`; else us-east-1
   */
  readonly region?: string;
  /** BR's `--s3.provider` (`aws`, `ceph`, `minio`, ...). @default none (AWS) */
  readonly provider?: string;
  /** @default true */
  readonly forcePathStyle?: boolean;
}

/** BR's region when it has none and does not ask (br/pkg/storage/s3.go `defaultRegion`). */
const DEFAULT_REGION = 'us-east-1';

/**
 * Where the signing region comes from, as BR decides it (br/pkg/storage/s3.go `NewS3Storage`): the
 * settings' region when they give one; else, for AWS (provider empty or `aws`, whatever the endpoint),
 * the bucket's own region, which S3 tells (`detect`); for any other provider (an S3-compatible store,
 * which may not tell it right) BR's default, us-east-1.
 */
export function regionSource(target: Pick<S3Target, 'region' | 'provider'>): { readonly region: string } | { readonly detect: true } {
  if (target.region) return { region: target.region };
  if (!target.provider || target.provider === 'aws') return { detect: true };
  return { region: DEFAULT_REGION };
}

/** The regions learnt, by endpoint, bucket and addressing: one HeadBucket per bucket for the process's life. */
const learnt = new Map<string, Promise<string>>();

export class S3Error extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Statuses S3 documents as "try again": InternalError, and SlowDown or ServiceUnavailable. */
const RETRIED = new Set([500, 503]);
const ATTEMPTS = 4;

export class S3Client {
  constructor(
    private readonly target: S3Target,
    private readonly keys: BucketKeys,
    private readonly timeoutMs = 30_000,
    /** The first retry waits up to this long, each next one twice as long. */
    private readonly retryBaseMs = 100,
  ) {}

  /** Every key under `prefix` (which should end in `/`, so that `a/b/` never matches `a/bc/`). */
  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const query: Record<string, string> = { 'list-type': '2', prefix, ...(token && { 'continuation-token': token }) };
      const xml = (await this.request('GET', query)).toString('utf8');
      for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(unescapeXml(m[1]));
      token = /<IsTruncated>true<\/IsTruncated>/.test(xml)
        ? unescapeXml(/<NextContinuationToken>([^<]*)</.exec(xml)?.[1] ?? '')
        : undefined;
    } while (token);
    return keys;
  }

  /** Deletes the keys; an error names the first key S3 would not delete. */
  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const body = Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${batch.map((k) => `<Object><Key>${escapeXml(k)}</Key></Object>`).join('')}</Delete>`,
      );
      const xml = (await this.request('POST', { delete: '' }, body)).toString('utf8');
      const failed = /<Error>[\s\S]*?<Key>([^<]*)<\/Key>[\s\S]*?<Code>([^<]*)<\/Code>/.exec(xml);
      if (failed) throw new S3Error(`could not delete ${unescapeXml(failed[1])}: ${failed[2]}`, 200);
    }
  }

  private async request(method: 'GET' | 'POST', query: Record<string, string>, body?: Buffer): Promise<Buffer> {
    const region = await this.region();
    const endpoint = this.target.endpoint || `https://s3.${region}.amazonaws.com`;
    return this.retrying(() => this.send(method, bucketUrl(endpoint, this.target), region, query, body));
  }

  /** The region to sign for: given, BR's default, or the bucket's own, learnt once. */
  private region(): Promise<string> {
    const source = regionSource(this.target);
    if ('region' in source) return Promise.resolve(source.region);
    const key = JSON.stringify([this.target.endpoint ?? '', this.target.bucket, this.target.forcePathStyle ?? true]);
    let region = learnt.get(key);
    if (!region) {
      region = this.retrying(() => this.askRegion());
      learnt.set(key, region);
      // A failure is not kept: the next pass asks again.
      region.catch(() => learnt.delete(key));
    }
    return region;
  }

  /**
   * The bucket's region as BR learns it (aws-sdk-go s3manager `GetBucketRegionWithClient`, which BR
   * calls with its credentials and, under a given endpoint, its addressing): HeadBucket, path-style
   * on AWS's global endpoint when no endpoint is given, redirects not followed, signed for us-east-1;
   * S3 names the region in `x-amz-bucket-region` whatever the status. Without that header a
   * successful answer means us-east-1, a failed one is an error (`NormalizeBucketLocation`).
   */
  private async askRegion(): Promise<string> {
    const url = this.target.endpoint
      ? bucketUrl(this.target.endpoint, this.target)
      : bucketUrl('https://s3.amazonaws.com', { bucket: this.target.bucket });
    const res = await this.fetchSigned('HEAD', url, DEFAULT_REGION, {});
    await res.arrayBuffer();
    const told = res.headers.get('x-amz-bucket-region');
    if (told !== null && told !== '') return told === 'EU' ? 'eu-west-1' : told;
    if (res.status < 300) return DEFAULT_REGION;
    throw new S3Error(
      `HEAD s3://${this.target.bucket}: could not learn the bucket's region (HTTP ${res.status}); give it in the storage's s3.region`,
      res.status,
    );
  }

  private async retrying<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (e) {
        if (!(e instanceof S3Error) || !RETRIED.has(e.status) || attempt >= ATTEMPTS) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * this.retryBaseMs * 2 ** (attempt - 1)));
      }
    }
  }

  private async send(method: 'GET' | 'POST', base: URL, region: string, query: Record<string, string>, body?: Buffer): Promise<Buffer> {
    const res = await this.fetchSigned(method, base, region, query, body);
    const out = Buffer.from(await res.arrayBuffer());
    if (res.status >= 300) {
      const xml = out.toString('utf8');
      const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1] ?? `HTTP ${res.status}`;
      const message = /<Message>([^<]*)<\/Message>/.exec(xml)?.[1];
      throw new S3Error(`${method} s3://${this.target.bucket}: ${code}${message ? `: ${message}` : ''}`, res.status);
    }
    return out;
  }

  /** One request signed with AWS Signature Version 4 for `region`; a HEAD's redirect is its answer, not followed. */
  private async fetchSigned(
    method: 'GET' | 'POST' | 'HEAD',
    base: URL,
    region: string,
    query: Record<string, string>,
    body?: Buffer,
  ): Promise<Response> {
    const url = new URL(base);
    const canonicalQuery = Object.keys(query)
      .sort()
      .map((k) => `${rfc3986(k)}=${rfc3986(query[k])}`)
      .join('&');
    url.search = canonicalQuery;
    const payload = body ?? Buffer.alloc(0);
    const hash = createHash('sha256').update(payload).digest('hex');
    const now = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
    const headers: Record<string, string> = { host: url.host, 'x-amz-content-sha256': hash, 'x-amz-date': now };
    if (body) headers['content-md5'] = createHash('md5').update(body).digest('base64');
    const day = now.slice(0, 8);
    const scope = `${day}/${region}/s3/aws4_request`;
    const names = Object.keys(headers).sort();
    const canonical = [
      method,
      url.pathname || '/',
      canonicalQuery,
      ...names.map((h) => `${h}:${headers[h]}`),
      '',
      names.join(';'),
      hash,
    ].join('\n');
    const toSign = ['AWS4-HMAC-SHA256', now, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
    let key = createHmac('sha256', `AWS4${this.keys.secretKey}`).update(day).digest();
    for (const part of [region, 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
    const signature = createHmac('sha256', key).update(toSign).digest('hex');
    headers.authorization = `AWS4-HMAC-SHA256 Credential=${this.keys.accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
    const { host: _host, ...sent } = headers;
    return fetch(url, {
      method,
      headers: sent,
      ...(body && { body }),
      redirect: method === 'HEAD' ? 'manual' : 'follow',
      signal: AbortSignal.timeout(this.timeoutMs),
    });
  }
}

/** The bucket's URL under `endpoint`: path-style unless `forcePathStyle: false`. */
function bucketUrl(endpoint: string, target: Pick<S3Target, 'bucket' | 'forcePathStyle'>): URL {
  const url = new URL(endpoint.replace(/\/+$/, ''));
  if (target.forcePathStyle === false) url.hostname = `${target.bucket}.${url.hostname}`;
  else url.pathname = `${url.pathname.replace(/\/+$/, '')}/${target.bucket}`;
  return url;
}

/** URI encoding as SigV4 wants it: RFC 3986's unreserved characters stay, everything else %XX. */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
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
