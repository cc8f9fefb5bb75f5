/**
 * Every name a render takes: each object the clusters and the documents beside them render, and each
 * object made for them at run time, which Git never holds. Two objects of one kind, name and namespace
 * are one object: applied together, the last one silently wins, and the controller or Kubernetes
 * overwrites or refuses what Git keeps. One reservation serves both checks: between the rendered
 * objects themselves ({@link reserveNames}: a Backup `pd` beside a cluster `backup` renders
 * ConfigMap `backup-pd`, PD's config), and of the objects kept beside them (`collisions` in
 * passthrough.ts).
 */
import type { LoadedDocument } from '../tidbcluster/load';
import { formatIssue, type SourceRef } from '../tidbcluster/errors';
import {
  BACKUP_LABEL,
  isLogCommandJobName,
  LOG_COMMANDS,
  logCommandJobName,
  logCommandKey,
  names,
  OPERATION_KEY,
} from '../tidbcluster/names';
import { MONITORING_ENV, parseMonitoringPublishInfo, type MonitoringPublishInfo } from '../tidbcluster/contract';
import type { RenderedOrigin } from './render';

/** The input document an object comes from. */
export interface InputRef {
  /** The document's kind: `TidbCluster`, `Backup`... */
  readonly kind: string;
  /** Its `metadata.name`. */
  readonly name: string;
  /** Its file and place in it. */
  readonly source: SourceRef;
  /** The line of a path in the document. @default none (no line is given) */
  readonly line?: (path: string) => number | undefined;
}

/** The objects one cluster renders, the cluster, and the documents they come from. */
export interface RenderedSet {
  /** The rendered objects, in output order. */
  readonly objects: readonly Record<string, unknown>[];
  /** `rendered from FILE: document N`: the cluster's document. */
  readonly from: string;
  /** The cluster's name and namespace (none when it names none). */
  readonly cluster: { readonly name: string; readonly namespace?: string };
  /** The cluster's document. */
  readonly input: InputRef;
  /** The document each object (same index) comes from. @default the cluster's, for every object */
  readonly inputs?: readonly InputRef[];
}

/** The names of a kind made at run time: `test` tells one; `samples` are some, to tell whether two sets meet. */
export interface NamePattern {
  /** Whether the set holds `name`. */
  test(name: string): boolean;
  /** Some names of the set (none when they cannot be told ahead). */
  readonly samples: readonly string[];
  /** All the names are `<stem>-<digits>`: two such sets meet only when their stems are equal. @default none */
  readonly stem?: string;
  /** All the names start with it (it ends with `-`). @default none */
  readonly prefix?: string;
}

/** A name taken in a namespace ('' when the object names none). */
export interface Reservation {
  /** The API group ('' for the core group). */
  readonly group: string;
  readonly kind: string;
  /** '' when the object names none: it lands in whichever it is applied to. */
  readonly namespace: string;
  /** The name, or the names made at run time. */
  readonly name: string | NamePattern;
  /** The document that makes it. */
  readonly input: InputRef;
  /** Made at run time (not in the output). @default false */
  readonly runTime?: boolean;
  /** The object in messages: `ConfigMap backup-pd in namespace tidb`, `Job backup-x-<minutes> in namespace tidb`. */
  shown(): string;
  /** What takes it, for a kept object's message: `ConfigMap basic-pd in namespace tidb, rendered from FILE: document N`. */
  by(): string;
  /** Who takes it, for a rendered object's message: `which TidbCluster backup at FILE: document 1 (metadata.name, line 4) renders too`. */
  claim(): string;
  /** A kept object (so either may be renamed). @default false */
  readonly passed?: true;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const metaOf = (o: Record<string, unknown>) =>
  (o.metadata ?? {}) as { name?: unknown; namespace?: unknown; labels?: Record<string, string> };
export const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '');
const inNs = (ns: string) => (ns !== '' ? ` in namespace ${ns}` : '');

/** `<prefix>-<digits>`: the Pods of a StatefulSet, the Jobs of a CronJob. */
function numbered(prefix: string): NamePattern {
  const re = new RegExp(`^${escape(prefix)}-[0-9]+$`);
  return { test: (n) => re.test(n), samples: [`${prefix}-1`], stem: prefix };
}

/** The log command Jobs of one template, for every run. */
function logJobs(template: string): NamePattern {
  return {
    test: (n) => isLogCommandJobName(template, n),
    samples: [logCommandJobName(template, 1), logCommandJobName(template, Number.MAX_SAFE_INTEGER)],
  };
}

/** Names that start with `prefix`, which ends with `-` (a dashboard's name comes from the image). */
const prefixed = (prefix: string): NamePattern => ({ test: (n) => n.startsWith(prefix), samples: [], prefix });

/** `FILE: document N (metadata.name, line L)`. */
export function placeOf(input: InputRef): string {
  const line = input.line?.('metadata.name');
  return `${input.source.file}: document ${input.source.document}${line !== undefined ? ` (metadata.name, line ${line})` : ''}`;
}

/**
 * Every reservation of the rendered sets: first what the clusters make themselves (their objects and
 * the run-time ones), then what their TidbInitializers and TidbMonitors make (named after the cluster),
 * then what the Backups, schedules and Restores make (named after the document), so that a message
 * points at the document a rename helps.
 */
export function reservations(sets: readonly RenderedSet[]): Reservation[] {
  const ranks: Reservation[][] = [[], [], []];
  for (const set of sets) {
    const cluster = set.input;
    const add = (r: Reservation) => ranks[r.input === cluster ? 0 : NAMED_AFTER_CLUSTER.has(r.input.kind) ? 1 : 2].push(r);
    set.objects.forEach((o, i) => {
      const meta = metaOf(o);
      const input = set.inputs?.[i] ?? cluster;
      const namespace = String(meta.namespace ?? '');
      const shown = () => `${String(o.kind)} ${String(meta.name)}${inNs(namespace)}`;
      const by = () => `${shown()}, ${input === cluster ? set.from : renderedFrom(input)}`;
      const claim = () => `which ${input.kind} ${input.name} at ${placeOf(input)} renders too`;
      add({ group: groupOf(String(o.apiVersion)), kind: String(o.kind), namespace, name: String(meta.name), input, shown, by, claim });
    });
    for (const r of runTimeObjects(set, cluster)) add(r);
  }
  return ranks.flat();
}

/** Documents whose objects are named after their cluster, not after themselves. */
const NAMED_AFTER_CLUSTER = new Set(['TidbInitializer', 'TidbMonitor']);

const renderedFrom = (input: InputRef) => `rendered from ${input.source.file}: document ${input.source.document}`;

/**
 * The objects made at run time for a cluster: the controller's state ConfigMap and Lease, the Jobs it
 * creates from a Backup's or Restore's ConfigMap, the Pods of the rendered StatefulSets and the Jobs of
 * the rendered CronJobs (Kubernetes names them `<sts>-<ordinal>` and `<cronjob>-<minutes>`), the
 * Endpoints of the Services that select Pods, and what the monitoring Job publishes. Not the claims of
 * the StatefulSets: a claim made ahead of its Pod (to bind a chosen volume) is how Kubernetes is used.
 * Messages are made when needed: a render of many clusters reserves many names.
 */
function runTimeObjects(set: RenderedSet, cluster: InputRef): Reservation[] {
  const { name: c } = set.cluster;
  const ns = set.cluster.namespace ?? '';
  const controller = () => `the controller of cluster ${c} (Deployment ${names.discovery(c)}, ${set.from})`;
  const controllerOf = (input: InputRef) => `the controller of cluster ${c} (${input.kind} ${input.name} at ${placeOf(input)})`;
  const out: Reservation[] = [];
  /** `by`: after `<Kind> <name> in namespace <ns>, `; `claim`: the whole clause. */
  const reserve = (
    group: string,
    kind: string,
    namespace: string,
    name: string | NamePattern,
    shownName: string,
    input: InputRef,
    by: () => string,
    claim: () => string,
  ) => {
    const shown = () => `${kind} ${shownName}${inNs(namespace)}`;
    out.push({ group, kind, namespace, name, input, runTime: true, shown, by: () => `${shown()}, ${by()}`, claim });
  };
  const status = names.status(c);
  const lease = names.lease(c);
  reserve(
    '',
    'ConfigMap',
    ns,
    status,
    status,
    cluster,
    () => `where ${controller()} keeps its state at run time`,
    () => `where ${controllerOf(cluster)} keeps its state at run time`,
  );
  reserve(
    'coordination.k8s.io',
    'Lease',
    ns,
    lease,
    lease,
    cluster,
    () => `which ${controller()} holds at run time`,
    () => `which ${controllerOf(cluster)} holds at run time`,
  );
  set.objects.forEach((o, i) => {
    const input = set.inputs?.[i] ?? cluster;
    const meta = metaOf(o);
    const name = String(meta.name);
    const on = String(meta.namespace ?? '');
    const from = () => (input === cluster ? set.from : renderedFrom(input));
    const of = () => `of ${input.kind} ${input.name} at ${placeOf(input)}`;
    if (o.kind === 'ConfigMap' && meta.labels?.[BACKUP_LABEL.operation] !== undefined) {
      const data = (o.data ?? {}) as Record<string, string>;
      const by = () => `which ${controller()} creates at run time from ConfigMap ${name}`;
      const creates = (shownName: string) => () => `where ${controllerOf(input)} creates Job ${shownName} at run time`;
      const job = templateName(data[OPERATION_KEY.job]);
      if (job !== undefined) reserve('batch', 'Job', on, job, job, input, by, creates(job));
      for (const command of LOG_COMMANDS) {
        const template = templateName(data[logCommandKey(command)]);
        if (template !== undefined)
          reserve('batch', 'Job', on, logJobs(template), `${template}-<n>`, input, by, creates(`${template}-<n>`));
      }
    } else if (o.kind === 'StatefulSet') {
      const what = `which Kubernetes creates at run time for StatefulSet ${name}`;
      reserve(
        '',
        'Pod',
        on,
        numbered(name),
        `${name}-<ordinal>`,
        input,
        () => `${what} (${from()})`,
        () => `${what} ${of()}`,
      );
    } else if (o.kind === 'CronJob') {
      const what = `which Kubernetes creates at run time for CronJob ${name}`;
      reserve(
        'batch',
        'Job',
        on,
        numbered(name),
        `${name}-<minutes>`,
        input,
        () => `${what} (${from()})`,
        () => `${what} ${of()}`,
      );
    } else if (o.kind === 'Service' && (o.spec as { selector?: unknown } | undefined)?.selector !== undefined) {
      const what = `which Kubernetes writes at run time for Service ${name}`;
      reserve(
        '',
        'Endpoints',
        on,
        name,
        name,
        input,
        () => `${what} (${from()})`,
        () => `${what} ${of()}`,
      );
    } else if (o.kind === 'Job') {
      const info = publishInfo(o);
      const by = () => `which the monitoring Job ${name} (${from()}) publishes at run time`;
      const claim = () => `which the monitoring Job ${name} ${of()} publishes at run time`;
      if (info?.rules) reserve('monitoring.coreos.com', 'PrometheusRule', on, names.alertRules(c), names.alertRules(c), input, by, claim);
      if (info?.dashboards)
        reserve(
          '',
          'ConfigMap',
          on,
          prefixed(names.dashboard(c, '')),
          names.dashboard(c, '<name>'),
          input,
          () => `a dashboard ${by()}`,
          () => `a dashboard ${claim()}`,
        );
    }
  });
  return out;
}

function templateName(json: string | undefined): string | undefined {
  if (json === undefined) return undefined;
  try {
    const name = (JSON.parse(json) as { metadata?: { name?: unknown } }).metadata?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

function publishInfo(job: Record<string, unknown>): MonitoringPublishInfo | undefined {
  const containers =
    (job.spec as { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } } | undefined)?.template?.spec
      ?.containers ?? [];
  const value = containers.flatMap((c) => c.env ?? []).find((e) => e.name === MONITORING_ENV)?.value;
  if (value === undefined) return undefined;
  try {
    return parseMonitoringPublishInfo(value);
  } catch {
    return undefined;
  }
}

/**
 * Whether two objects land in one namespace. An object that names no namespace lands in the one it is
 * applied to (`-n`, Argo CD's destination, Flux's `targetNamespace`), which can be any: it is counted
 * as landing in every namespace, so one beside a cluster in `tidb` lands on that cluster's objects.
 */
export const sameNamespace = (a: string, b: string): boolean => a === b || a === '' || b === '';

/** Whether two names, or sets of names, share one. */
function nameOverlaps(a: string | NamePattern, b: string | NamePattern): boolean {
  if (typeof a === 'string') return typeof b === 'string' ? a === b : b.test(a);
  if (typeof b === 'string') return a.test(b);
  return a.samples.some((n) => b.test(n)) || b.samples.some((n) => a.test(n));
}

/** `<stem>-<digits>`: the stem, or undefined. */
const stemOf = (name: string): string | undefined => /^(.*)-[0-9]+$/.exec(name)?.[1];

/** The leading parts of a name that end with `-`: where a set of names by prefix may hold it. */
function dashPrefixes(name: string): string[] {
  const out: string[] = [];
  for (let i = name.indexOf('-'); i >= 0; i = name.indexOf('-', i + 1)) out.push(name.slice(0, i + 1));
  return out;
}

/**
 * The reservations made so far, found by kind and name: a name by itself, and the sets of names by
 * their stem or prefix, so that finding one costs the same however many there are (a render of a
 * thousand clusters in one namespace makes thousands of sets of Pod names).
 */
export class ReservedNames {
  private readonly byName = new Map<string, Reservation[]>();
  private readonly byStem = new Map<string, Reservation[]>();
  private readonly byPrefix = new Map<string, Reservation[]>();
  /** Per kind: the sets of names with neither stem nor prefix. */
  private readonly loose = new Map<string, Reservation[]>();
  /** Per kind: everything, for a set of names without a stem. */
  private readonly all = new Map<string, Reservation[]>();
  private readonly order = new Map<Reservation, number>();

  /** The first reservation the one given lands on, if any. */
  find(r: Pick<Reservation, 'group' | 'kind' | 'namespace' | 'name'>): Reservation | undefined {
    const kind = `${r.group}/${r.kind}`;
    const at = (map: Map<string, Reservation[]>, key: string | undefined) => (key === undefined ? [] : (map.get(`${kind}/${key}`) ?? []));
    let candidates: Reservation[];
    if (typeof r.name === 'string') {
      const name = r.name;
      candidates = [
        ...at(this.byName, name),
        ...at(this.byStem, stemOf(name)),
        ...dashPrefixes(name).flatMap((p) => at(this.byPrefix, p)),
        ...(this.loose.get(kind) ?? []),
      ];
    } else if (r.name.stem !== undefined) {
      const sample = `${r.name.stem}-1`;
      candidates = [
        ...at(this.byStem, r.name.stem),
        ...dashPrefixes(sample).flatMap((p) => at(this.byPrefix, p)),
        ...(this.loose.get(kind) ?? []),
      ];
    } else {
      candidates = this.all.get(kind) ?? [];
    }
    let first: Reservation | undefined;
    for (const c of candidates) {
      if (!sameNamespace(c.namespace, r.namespace) || !nameOverlaps(c.name, r.name)) continue;
      if (first === undefined || this.order.get(c)! < this.order.get(first)!) first = c;
    }
    return first;
  }

  add(r: Reservation): void {
    const kind = `${r.group}/${r.kind}`;
    this.order.set(r, this.order.size);
    const push = (map: Map<string, Reservation[]>, key: string) => (map.get(key) ?? map.set(key, []).get(key)!).push(r);
    push(this.all, kind);
    if (typeof r.name === 'string') {
      push(this.byName, `${kind}/${r.name}`);
      // A name `<stem>-<digits>` is found by the sets of names of its stem.
      const stem = stemOf(r.name);
      if (stem !== undefined) push(this.byStem, `${kind}/${stem}`);
    } else if (r.name.stem !== undefined) {
      push(this.byStem, `${kind}/${r.name.stem}`);
    } else if (r.name.prefix !== undefined) {
      push(this.byPrefix, `${kind}/${r.name.prefix}`);
    } else {
      push(this.loose, kind);
    }
  }
}

/** The names the rendered sets take, and the objects among them that take one twice. */
export interface ReservedSets {
  /** Every name taken, to find a kept object's place in. */
  readonly names: ReservedNames;
  /**
   * Each object that a cluster or a document beside it renders, or makes at run time, on a name another
   * one takes first: one message each, at the document to rename (`metadata.name`), naming the other.
   */
  readonly collisions: readonly string[];
}

/** Reserves the names of the rendered sets, and reports those taken twice. */
export function reserveNames(sets: readonly RenderedSet[]): ReservedSets {
  const taken = new ReservedNames();
  const out: string[] = [];
  for (const r of reservations(sets)) {
    const first = taken.find(r);
    if (first === undefined) {
      taken.add(r);
      continue;
    }
    const made = r.runTime ? `makes ${r.shown()} at run time` : `renders ${r.shown()}`;
    out.push(
      formatIssue(
        {
          path: 'metadata.name',
          line: r.input.line?.('metadata.name'),
          message: `${r.input.kind} ${r.input.name} ${made}, ${first.claim()}; rename the ${r.input.kind}`,
        },
        r.input.source,
      ),
    );
  }
  return { names: taken, collisions: out };
}

/** The documents the objects of a rendered cluster come from: the cluster's, or one beside it. */
export function inputsOf(
  origins: readonly RenderedOrigin[],
  cluster: {
    readonly source: SourceRef;
    readonly line?: (path: string) => number | undefined;
    readonly resolved: { readonly name: string; readonly namespace?: string };
  },
  documents: readonly LoadedDocument<{ readonly kind: string; readonly name: string; readonly namespace?: string }>[],
): { input: InputRef; inputs: InputRef[] } {
  const input: InputRef = {
    kind: 'TidbCluster',
    name: cluster.resolved.name,
    source: cluster.source,
    ...(cluster.line && { line: cluster.line }),
  };
  const found = new Map<string, InputRef>();
  const ns = cluster.resolved.namespace ?? '';
  const inputs = origins.map((o) => {
    if (o.kind === 'TidbCluster') return input;
    const key = `${o.kind}/${o.name}`;
    let ref = found.get(key);
    if (ref === undefined) {
      const candidates = documents.filter((d) => d.value.kind === o.kind && d.value.name === o.name);
      const doc = candidates.find((d) => (d.value.namespace ?? ns) === ns) ?? candidates[0];
      ref = doc ? { kind: o.kind, name: o.name, source: doc.source, line: doc.line } : input;
      found.set(key, ref);
    }
    return ref;
  });
  return { input, inputs };
}
