/**
 * The object store behind the simulated API server (its "etcd"): objects per resource type, one
 * global resourceVersion counter bumped by every write, and a bounded history of change events that
 * watches replay from a given resourceVersion.
 */
import type { KubeObject } from './kube-api';
import { type ResourceType, typeKey } from './kube-resources';
import { clone, deepFreeze } from './kube-util';

/** The kind of change a watch event reports. */
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change. Objects in events are frozen and never change afterwards. */
export interface StoreEvent {
  readonly rv: number;
  readonly type: EventType;
  readonly rt: ResourceType;
  /** The object after the change; for DELETED, its last state stamped with the deletion's resourceVersion. */
  readonly object: KubeObject;
  /** The object before the change (MODIFIED and DELETED). */
  readonly prev?: KubeObject;
}

/**
 * resourceVersions start above this, so that any small number a test makes up (say "1") is older than
 * the retained history and answers 410 Gone, like a compacted etcd.
 */
const FIRST_RESOURCE_VERSION = 1000;

/** Objects, resourceVersions and change history. */
export class ObjectStore {
  private rv = FIRST_RESOURCE_VERSION;
  /** Events with rv <= this are no longer in `history`. */
  private compactedRv = FIRST_RESOURCE_VERSION;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners: Array<(e: StoreEvent) => void> = [];

  /** @param historyLimit how many events to retain for watches that resume from a resourceVersion. */
  constructor(private readonly historyLimit: number) {}

  /** The resourceVersion of the latest write, as LIST answers report it. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Calls `fn` synchronously after every committed change. */
  onEvent(fn: (e: StoreEvent) => void): void {
    this.listeners.push(fn);
  }

  /** The stored (frozen) object, if any. */
  get(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(typeKey(rt))?.get(`${namespace}/${name}`);
  }

  /** Stored (frozen) objects of a type, optionally of one namespace, ordered by namespace and name. */
  list(rt: ResourceType, namespace?: string): KubeObject[] {
    const all = [...(this.objects.get(typeKey(rt))?.values() ?? [])];
    return all.filter((o) => namespace === undefined || o.metadata.namespace === namespace).sort((a, b) => key(a).localeCompare(key(b)));
  }

  /** Stores a new or changed object under a new resourceVersion; returns the stored (frozen) copy. */
  put(rt: ResourceType, obj: KubeObject): KubeObject {
    const ns = obj.metadata.namespace ?? '';
    const prev = this.get(rt, ns, obj.metadata.name);
    const stored = clone(obj);
    stored.metadata.resourceVersion = String(++this.rv);
    deepFreeze(stored);
    let byName = this.objects.get(typeKey(rt));
    if (!byName) this.objects.set(typeKey(rt), (byName = new Map()));
    byName.set(key(stored), stored);
    this.record({ rv: this.rv, type: prev ? 'MODIFIED' : 'ADDED', rt, object: stored, prev });
    return stored;
  }

  /** Removes an object (if present) under a new resourceVersion; returns its last state. */
  remove(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const prev = this.get(rt, namespace, name);
    if (!prev) return undefined;
    this.objects.get(typeKey(rt))!.delete(`${namespace}/${name}`);
    const last = clone(prev);
    last.metadata.resourceVersion = String(++this.rv);
    const object = deepFreeze(last);
    this.record({ rv: this.rv, type: 'DELETED', rt, object, prev });
    return object;
  }

  /**
   * The events after resourceVersion `rv`, oldest first, or `'expired'` when some of them were
   * already dropped from the history.
   */
  eventsSince(rv: number): StoreEvent[] | 'expired' {
    if (rv < this.compactedRv) return 'expired';
    let i = this.history.length;
    while (i > 0 && this.history[i - 1].rv > rv) i--;
    return this.history.slice(i);
  }

  /** The oldest resourceVersion a watch can still resume from. */
  get oldestResumableVersion(): number {
    return this.compactedRv;
  }

  private record(e: StoreEvent): void {
    this.history.push(e);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped[dropped.length - 1].rv;
    }
    for (const fn of this.listeners) fn(e);
  }
}

function key(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}
