/**
 * The region the retention client signs for, chosen as BR chooses it (pingcap/tidb br/pkg/storage/s3.go
 * `NewS3Storage`): the settings' region; else, for AWS (provider none or `aws`), the bucket's own,
 * from HeadBucket's `x-amz-bucket-region` (aws-sdk-go service/s3/s3manager/bucket_region.go
 * `GetBucketRegionWithClient`), asked once; else us-east-1. Against the real S3-protocol server, behind
 * a proxy that records each request's signing scope and, where a test asks, names a region on
 * HeadBucket as AWS does.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { regionSource, S3Client } from '../../src/controller/clients/s3';
import { startS3Server, type S3Server } from '../support/s3-server';

const KEYS = { accessKey: 'S3RVER', secretKey: 'S3RVER' };

describe('which region a request is signed for', () => {
  test("the settings' region; else the bucket's for AWS, whatever the endpoint; else us-east-1", () => {
    expect(regionSource({ region: 'eu-west-1' })).toEqual({ region: 'eu-west-1' });
    expect(regionSource({ region: 'eu-west-1', provider: 'ceph' })).toEqual({ region: 'eu-west-1' });
    expect(regionSource({})).toEqual({ detect: true });
    expect(regionSource({ provider: 'aws' })).toEqual({ detect: true });
    // BR skips the lookup for every other provider: S3-compatible stores may not answer it right.
    expect(regionSource({ provider: 'ceph' })).toEqual({ region: 'us-east-1' });
    expect(regionSource({ provider: 'minio' })).toEqual({ region: 'us-east-1' });
  });

  test("on AWS without an endpoint: HeadBucket on the global endpoint, then the region's endpoint and scope", async () => {
    const seen: string[] = [];
    const spy = jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const url = String(input);
      const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(String((init?.headers as Record<string, string>).authorization))?.[1];
      seen.push(`${init?.method} ${url} ${scope} ${init?.redirect}`);
      // S3 answers a request for a bucket of another region with a redirect naming it.
      if (init?.method === 'HEAD') return new Response(null, { status: 301, headers: { 'x-amz-bucket-region': 'eu-west-2' } });
      return new Response('<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>p/a</Key></Contents></ListBucketResult>', {
        status: 200,
      });
    });
    try {
      const bucket = `aws-${Date.now()}`;
      expect(await new S3Client({ bucket }, KEYS).list('p/')).toEqual(['p/a']);
      expect(await new S3Client({ bucket }, KEYS).list('p/')).toEqual(['p/a']);
      expect(seen).toEqual([
        `HEAD https://s3.amazonaws.com/${bucket} us-east-1 manual`,
        `GET https://s3.eu-west-2.amazonaws.com/${bucket}?list-type=2&prefix=p%2F eu-west-2 follow`,
        // Learnt once for the process: the next client asks no more.
        `GET https://s3.eu-west-2.amazonaws.com/${bucket}?list-type=2&prefix=p%2F eu-west-2 follow`,
      ]);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('the region against the real S3-protocol server', () => {
  let server: S3Server;
  let proxy: Server;
  let endpoint = '';
  /** The region the proxy names on HeadBucket (none: the server's own answer, which names none). */
  let names: string | undefined;
  const seen: string[] = [];

  beforeAll(async () => {
    server = await startS3Server(['bk', 'other']);
    const target = new URL(server.endpoint);
    proxy = createServer((req, res) => {
      const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(req.headers.authorization ?? '')?.[1];
      seen.push(`${req.method} ${req.url!.split('?')[0]} ${scope}`);
      const forward = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          const headers = { ...up.headers, ...(req.method === 'HEAD' && names && { 'x-amz-bucket-region': names }) };
          res.writeHead(up.statusCode!, headers);
          up.pipe(res);
        },
      );
      req.pipe(forward);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await new Promise((r) => proxy?.close(r));
    await server?.stop();
  }, 60_000);
  beforeEach(() => {
    seen.length = 0;
    names = undefined;
  });

  test('a region S3 names is signed for, and the server checks that signature; asked once', async () => {
    names = 'eu-central-1';
    await fetch(`${server.endpoint}/bk/p/a`, { method: 'PUT', body: 'x' });
    expect(await new S3Client({ bucket: 'bk', endpoint }, KEYS).list('p/')).toEqual(['p/a']);
    await new S3Client({ bucket: 'bk', endpoint }, KEYS).delete(['p/a']);
    expect(seen).toEqual(['HEAD /bk us-east-1', 'GET /bk eu-central-1', 'POST /bk eu-central-1']);
  }, 60_000);

  test('a server that names no region: us-east-1, as the SDK reads a plain success; a missing bucket is an error, asked again next time', async () => {
    expect(await new S3Client({ bucket: 'other', endpoint, provider: 'aws' }, KEYS).list('p/')).toEqual([]);
    expect(seen).toEqual(['HEAD /other us-east-1', 'GET /other us-east-1']);
    seen.length = 0;
    const missing = () => new S3Client({ bucket: 'nowhere', endpoint }, KEYS, 5_000, 1).list('p/');
    await expect(missing()).rejects.toThrow(
      "HEAD s3://nowhere: could not learn the bucket's region (HTTP 404); give it in the storage's s3.region",
    );
    await expect(missing()).rejects.toThrow('HTTP 404');
    expect(seen).toEqual(['HEAD /nowhere us-east-1', 'HEAD /nowhere us-east-1']);
  }, 60_000);

  test('an S3-compatible provider, or a region given, is not asked', async () => {
    names = 'eu-central-1';
    expect(await new S3Client({ bucket: 'other', endpoint, provider: 'ceph' }, KEYS).list('p/')).toEqual([]);
    expect(await new S3Client({ bucket: 'other', endpoint, region: 'ap-south-1' }, KEYS).list('p/')).toEqual([]);
    expect(seen).toEqual(['GET /other us-east-1', 'GET /other ap-south-1']);
  }, 60_000);
});
