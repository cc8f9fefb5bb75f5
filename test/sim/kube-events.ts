/**
 * The event recorder that kube-controller-manager's controllers write core/v1 Events with (client-go
 * `tools/record`), for the simulated controllers: Events named and shaped as the real recorder makes
 * them, repeats of one Event counted on it instead of stored again, and the per-object spam filter that
 * keeps a controller retrying every sync from flooding the store.
 */
import type { KubeObject } from './kube-api';
import type { Registry } from './kube-registry';
import { apiVersionOf, type ResourceType, typeByApiVersionKind } from './kube-resources';
import type { ObjectStore } from './kube-store';
import { clone, rfc3339 } from './kube-util';

const EVENTS = typeByApiVersionKind('v1', 'Event')!;

/**
 * The spam filter's token bucket per (source, object, type): 25 Events at once, then one every 5
 * minutes (kubernetes v1.32 `staging/src/k8s.io/client-go/tools/record/events_cache.go`,
 * defaultSpamBurst and defaultSpamQPS, keyed by getSpamKey).
 */
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 300_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** Records Events for one reporting component, as `record.EventRecorder.Event` does. */
export class EventRecorder {
  private readonly buckets = new Map<string, Bucket>();
  /** Repeats are counted on the Event that first reported them (the correlator's event key). */
  private readonly names = new Map<string, string>();
  /** The last name suffix given, so that two Events in one millisecond still get distinct names. */
  private lastNanos = 0n;

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: Registry,
    private readonly component: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records `reason` and `message` about `obj` (of type `rt`). A repeat of an Event still stored bumps
   * its `count` and `lastTimestamp` (client-go's EventLogger, `eventObserve`); the spam filter drops
   * Events beyond its budget. Never throws: recording is best effort, as in client-go.
   */
  event(rt: ResourceType, obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const involved = {
      kind: rt.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      uid: obj.metadata.uid,
      apiVersion: apiVersionOf(rt),
      resourceVersion: obj.metadata.resourceVersion,
    };
    const now = this.now();
    if (
      !this.allow(
        [this.component, involved.kind, involved.namespace, involved.name, involved.uid, involved.apiVersion, type].join('\u0000'),
        now,
      )
    )
      return;
    const key = [
      this.component,
      involved.kind,
      involved.namespace,
      involved.name,
      involved.uid,
      involved.apiVersion,
      type,
      reason,
      message,
    ].join('\u0000');
    const ns = obj.metadata.namespace ?? 'default';
    try {
      const seen = this.names.get(key);
      const old = seen ? this.store.get(EVENTS, ns, seen) : undefined;
      if (old) {
        const next = clone(old) as KubeObject;
        next.count = (old.count ?? 1) + 1;
        next.lastTimestamp = rfc3339(now);
        this.registry.commit(EVENTS, old, next, { fieldManager: this.component });
        return;
      }
      // makeEvent in staging/src/k8s.io/client-go/tools/record/event.go: `<object name>.<unix nanoseconds in hex>`.
      const nanos = BigInt(now) * 1_000_000n;
      this.lastNanos = nanos > this.lastNanos ? nanos : this.lastNanos + 1n;
      const name = `${obj.metadata.name}.${this.lastNanos.toString(16)}`;
      const created = this.registry.create(
        EVENTS,
        ns,
        {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace: ns },
          involvedObject: involved,
          reason,
          message,
          source: { component: this.component },
          firstTimestamp: rfc3339(now),
          lastTimestamp: rfc3339(now),
          count: 1,
          type,
          eventTime: null,
          reportingComponent: this.component,
          reportingInstance: '',
        },
        { fieldManager: this.component },
      );
      this.names.set(key, created.metadata.name);
    } catch {
      // client-go drops an Event it cannot write.
    }
  }

  /** Takes a token from the object's bucket, refilled at one per SPAM_REFILL_MS up to SPAM_BURST. */
  private allow(key: string, now: number): boolean {
    const b = this.buckets.get(key) ?? { tokens: SPAM_BURST, at: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + (now - b.at) / SPAM_REFILL_MS);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
