/**
 * The two calls retention makes on a bucket, whichever provider holds it (S3 and S3-compatible
 * stores in `s3.ts`, Google Cloud Storage in `gcs.ts`, Azure Blob Storage in `azure-blob.ts`), and
 * the retries the GCS and Azure clients share.
 */

/** A bucket (or container), as retention lists and empties a run's folder in it. */
export interface ObjectStore {
  /**
   * Every object name under `prefix`, all pages read. The prefix should end in `/`: object stores
   * match prefixes as strings, so `p/2026-01-02t00-00-00` would also list `p/2026-01-02t00-00-001/`.
   */
  list(prefix: string): Promise<string[]>;
  /** Deletes the objects; one that is already gone is no error. */
  delete(keys: readonly string[]): Promise<void>;
}

/** An answer a bucket gave that is not a success, with its HTTP status. */
export class ObjectStoreError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** How often, and after how long, a call is sent again. */
export interface RetryPolicy {
  /** Attempts in all. @default 4 */
  readonly attempts?: number;
  /** The first retry waits up to this long (jittered), each next one twice as long. @default 100 */
  readonly baseMs?: number;
}

/**
 * `call`, sent again after a jittered, doubling wait while it fails with a status in `retried`, as
 * the providers ask of their clients (GCS: 408, 429 and 5xx, "Retry strategy"; Azure Storage: 500
 * and 503, ServerBusy and OperationTimedOut). Every call retention makes is idempotent.
 */
export async function retrying<T>(call: () => Promise<T>, retried: ReadonlySet<number>, policy: RetryPolicy = {}): Promise<T> {
  const attempts = policy.attempts ?? 4;
  const baseMs = policy.baseMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof ObjectStoreError) || !retried.has(e.status) || attempt >= attempts) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * baseMs * 2 ** (attempt - 1)));
    }
  }
}

/**
 * Runs `act` on every item, at most `width` at a time; the first failure is thrown once the calls
 * under way have ended. For stores that delete one object a request (GCS, Azure), as tidb-operator's
 * cleaner deletes them concurrently.
 */
export async function eachConcurrently<T>(items: readonly T[], width: number, act: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++];
      try {
        await act(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  if (failure) throw failure.error;
}
