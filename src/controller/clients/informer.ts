/**
 * A cache of one resource in one namespace, kept by list and watch as Kubernetes' informers keep it: a
 * list (in pages) gives the objects and a resourceVersion; a watch from there with bookmarks keeps them;
 * a watch the server ends (its timeout) resumes from the last resourceVersion seen; a resourceVersion
 * the server no longer has (410 Gone) lists again at once; any other failure lists again after a
 * backoff (1 s doubling to 30 s), as it keeps failing for a few seconds after an API server restart,
 * whose RBAC caches answer 403. Until the list after a failure is done the resource counts as not
 * synced, and the old objects answer lookups.
 */
import type { Logger } from '../runtime/log';
import type { KubeRest, WatchEvent } from './kube-rest';

/** What a watch's server timeout is drawn from, as client-go's reflector draws it (5 to 10 minutes). */
const WATCH_TIMEOUT_S = 300;
const PAGE = 500;
const MAX_BACKOFF_MS = 30_000;

interface Named {
  metadata?: { name?: string; resourceVersion?: string };
}

export class Informer<T extends Named> {
  private objects = new Map<string, T>();
  private resourceVersion = '';
  private current?: { abort: () => void };
  private stopped = false;
  private wake?: () => void;
  /** Listed at least once since the last failure, and watching. */
  synced = false;

  constructor(
    private readonly rest: KubeRest,
    /** The collection's path, e.g. `/api/v1/namespaces/ns/pods`. */
    readonly path: string,
    private readonly labelSelector: string,
    private readonly onChange: () => void,
    private readonly log: Logger,
    readonly resource: string,
  ) {}

  /** Starts listing and watching; resolves once the first list has answered (either way). */
  start(): Promise<void> {
    return new Promise((firstList) => void this.run(firstList));
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  stop(): void {
    this.stopped = true;
    this.current?.abort();
    this.wake?.();
  }

  private async run(firstList: () => void): Promise<void> {
    let backoff = 1000;
    while (!this.stopped) {
      try {
        if (!this.resourceVersion) {
          await this.relist();
          backoff = 1000;
          firstList();
        }
        if (this.stopped) return;
        await this.watchOnce();
      } catch (err) {
        firstList();
        if (this.stopped) return;
        this.resourceVersion = '';
        if (isGone(err)) {
          this.log.info('watch expired; listing again', { resource: this.resource });
          continue;
        }
        this.synced = false;
        this.log.warn('watch failed; listing again', { resource: this.resource, error: describeError(err), inMs: backoff });
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private async relist(): Promise<void> {
    const objects = new Map<string, T>();
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.rest.request<{ items?: T[]; metadata?: { resourceVersion?: string; continue?: string } }>('GET', this.path, {
        query: { labelSelector: this.labelSelector, limit: PAGE, continue: token },
      });
      for (const o of page.items ?? []) objects.set(o.metadata?.name ?? '', o);
      resourceVersion = page.metadata?.resourceVersion ?? '';
      token = page.metadata?.continue || undefined;
    } while (token && !this.stopped);
    if (this.stopped) return;
    this.objects = objects;
    this.resourceVersion = resourceVersion;
    this.synced = true;
    this.onChange();
  }

  private async watchOnce(): Promise<void> {
    let gone: Error | undefined;
    const timeoutSeconds = Math.floor(WATCH_TIMEOUT_S * (1 + Math.random()));
    const watch = this.rest.watch(
      this.path,
      { labelSelector: this.labelSelector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      (e) => {
        if (gone || this.stopped) return;
        if (e.type === 'ERROR') {
          const status = e.object as { code?: number; message?: string; reason?: string };
          gone = Object.assign(new Error(`watch error ${status?.code ?? ''}: ${status?.message ?? status?.reason ?? 'no message'}`), {
            code: status?.code,
          });
          watch.abort();
          return;
        }
        this.apply(e);
      },
    );
    this.current = watch;
    const started = Date.now();
    await watch.done;
    if (gone) throw gone;
    // A server that ends watches at once is not asked again in a busy loop.
    if (Date.now() - started < 1000 && !this.stopped) await this.sleep(1000);
  }

  private apply(e: WatchEvent): void {
    const o = e.object as T;
    const rv = o?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (e.type === 'BOOKMARK') return;
    const name = o?.metadata?.name ?? '';
    if (e.type === 'DELETED') this.objects.delete(name);
    else this.objects.set(name, o);
    this.onChange();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
}

function isGone(err: unknown): boolean {
  return (err as { code?: unknown })?.code === 410;
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message.split('\n')[0] : String(err);
}
