/**
 * WATCH streams: newline-delimited JSON events over a chunked HTTP response, replayed from a
 * resourceVersion out of the store's history and then fed live, filtered by namespace and selectors
 * the way the API server filters them (an object that stops matching a selector is reported DELETED).
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject } from './kube-api';
import { badRequest, failureStatus } from './kube-errors';
import { apiVersionOf, type ResourceType, typeKey } from './kube-resources';
import type { Matcher } from './kube-selectors';
import type { ObjectStore, StoreEvent } from './kube-store';

/** Which objects a watch reports. */
export interface WatchFilter {
  readonly rt: ResourceType;
  /** Undefined: all namespaces. */
  readonly namespace?: string;
  readonly labels: Matcher;
  readonly fields: Matcher;
}

/** The watch query parameters the server honours. */
export interface WatchOptions {
  /** Resume after this resourceVersion; absent, empty or "0": start with ADDED for every current object. */
  readonly resourceVersion?: string;
  /** `allowWatchBookmarks`: send a BOOKMARK before ending on timeout. */
  readonly allowBookmarks: boolean;
  /** `timeoutSeconds`: end the stream after this long. */
  readonly timeoutSeconds?: number;
  /** `sendInitialEvents`: after the initial ADDED events, send the `initial-events-end` BOOKMARK. */
  readonly sendInitialEvents: boolean;
}

/** One event as it goes on the wire. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

function matches(f: WatchFilter, obj: KubeObject): boolean {
  return (f.namespace === undefined || obj.metadata.namespace === f.namespace) && f.labels(obj) && f.fields(obj);
}

/** What a watcher with filter `f` sees of a store event, if anything. */
export function translate(e: StoreEvent, f: WatchFilter): WatchEvent | undefined {
  if (typeKey(e.rt) !== typeKey(f.rt)) return undefined;
  const now = matches(f, e.object);
  const before = e.prev !== undefined && matches(f, e.prev);
  switch (e.type) {
    case 'ADDED':
      return now ? { type: 'ADDED', object: e.object } : undefined;
    case 'DELETED':
      return now ? { type: 'DELETED', object: e.object } : undefined;
    case 'MODIFIED':
      if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: e.object };
      return before ? { type: 'DELETED', object: e.object } : undefined;
  }
}

class WatchStream {
  private timer?: NodeJS.Timeout;
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    readonly filter: WatchFilter,
    private readonly opts: WatchOptions,
    private readonly store: ObjectStore,
    private readonly onEnd: (s: WatchStream) => void,
  ) {
    res.on('close', () => this.finish());
    if (opts.timeoutSeconds !== undefined && opts.timeoutSeconds > 0) {
      this.timer = setTimeout(() => {
        if (this.opts.allowBookmarks) this.bookmark();
        this.end();
      }, opts.timeoutSeconds * 1000);
    }
  }

  send(e: WatchEvent): void {
    if (!this.ended && !this.res.destroyed) this.res.write(`${JSON.stringify(e)}\n`);
  }

  deliver(e: StoreEvent): void {
    const out = translate(e, this.filter);
    if (out) this.send(out);
  }

  bookmark(annotations?: Record<string, string>): void {
    const metadata: Record<string, unknown> = { resourceVersion: this.store.resourceVersion };
    if (annotations) metadata.annotations = annotations;
    this.send({ type: 'BOOKMARK', object: { kind: this.filter.rt.kind, apiVersion: apiVersionOf(this.filter.rt), metadata } });
  }

  /** Ends the response; the client sees a normal end of stream. */
  end(): void {
    if (!this.ended) this.res.end();
    this.finish();
  }

  private finish(): void {
    if (this.timer) clearTimeout(this.timer);
    this.ended = true;
    this.onEnd(this);
  }
}

/** All open watch streams, fed from the store. */
export class WatchHub {
  private readonly streams = new Set<WatchStream>();

  constructor(private readonly store: ObjectStore) {
    store.onEvent((e) => {
      for (const s of this.streams) s.deliver(e);
    });
  }

  /** How many watch streams are open. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Answers a WATCH request on `res`: replays what the client missed, then streams live events.
   * Throws a 400 error (before anything is written) for a malformed resourceVersion.
   */
  open(res: ServerResponse, filter: WatchFilter, opts: WatchOptions): void {
    const rvText = opts.resourceVersion ?? '';
    const fromRv = rvText === '' || rvText === '0' ? undefined : Number(rvText);
    if (fromRv !== undefined && !(Number.isInteger(fromRv) && fromRv >= 0)) {
      throw badRequest(`invalid resource version: "${rvText}"`);
    }
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    const stream = new WatchStream(res, filter, opts, this.store, (s) => this.streams.delete(s));
    if (fromRv === undefined) {
      for (const obj of this.store.list(filter.rt, filter.namespace)) {
        if (matches(filter, obj)) stream.send({ type: 'ADDED', object: obj });
      }
      if (opts.sendInitialEvents) stream.bookmark({ 'k8s.io/initial-events-end': 'true' });
    } else {
      const missed = this.store.eventsSince(fromRv);
      if (missed === 'expired') {
        const oldest = this.store.oldestResumableVersion;
        stream.send({ type: 'ERROR', object: failureStatus(410, `too old resource version: ${fromRv} (${oldest})`, 'Expired') });
        stream.end();
        return;
      }
      for (const e of missed) stream.deliver(e);
    }
    if (!res.destroyed) this.streams.add(stream);
  }

  /** Ends every open stream (the clients see the server close them). */
  closeAll(): void {
    for (const s of [...this.streams]) s.end();
  }
}
