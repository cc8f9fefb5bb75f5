/**
 * Render-time checks of a Changefeed's `spec.replicaConfig` (TiCDC's open API v2 `replica_config`)
 * against the fields the cluster's TiCDC release reads (./changefeed-fields.ts): unknown fields with a
 * did-you-mean, fields of another release named with the release that reads them, JSON types as Go
 * decodes them, enumerated values, and credentials, which never stand in a document kept in Git. The
 * sink URI's checks are in ./changefeed-sink.ts and exported from here too.
 */
import { suggest } from '../base/suggest';
import { tagVersionAtLeast } from '../base/version';
import { type SpecIssue, quoted } from '../tidbcluster/errors';
import {
  CDC_LINES,
  type CdcLine,
  type EnumValue,
  type FieldSpec,
  type FieldTree,
  type Leaf,
  NEW_ARCHITECTURE_LINES,
  REPLICA_CONFIG_FIELDS,
} from './changefeed-fields';
import { REDO_STORAGE_SCHEMES, SINK_SCHEMES, storageUriIssues } from './changefeed-sink';

export {
  hideSinkSecrets,
  SINK_CREDENTIAL_FIELDS,
  SINK_CREDENTIAL_PARAMS,
  SINK_SCHEMES,
  SINK_USERINFO_PASSWORD,
  type SinkFamily,
  sinkFamily,
  sinkUriIssues,
} from './changefeed-sink';

/** How {@link replicaConfigIssues} reads the config. */
export interface ReplicaConfigOptions {
  /** The cluster runs TiCDC's new architecture (pingcap/ticdc). @default false */
  newArchitecture?: boolean;
  /** Where the config stands in the document. @default 'spec.replicaConfig' */
  path?: string;
  /**
   * The sink URI's scheme, when known: with a Pulsar sink a partition rule outside the named ones is a
   * partition key, and with a Kafka sink a dispatcher's topic must be a Kafka topic expression.
   * @default unknown: partition rules are the named ones, topics are not checked
   */
  sinkScheme?: string;
}

/** A field as read at one release: its type, its enumerated values there, and its spec. */
export interface FieldAt {
  readonly type: Leaf | FieldsAt | readonly [FieldsAt];
  /** The values taken at this release, when TiCDC enumerates them. @default any */
  readonly enum?: readonly string[];
  readonly spec: FieldSpec;
}

/** Field name → the field, as one release reads it. */
export type FieldsAt = { readonly [name: string]: FieldAt };

/** The release line a TiCDC version reads as: the newest at or below it; the newest aliases and unknown tags read as the newest. */
export function cdcLineOf(version: string): CdcLine {
  for (let i = CDC_LINES.length - 1; i > 0; i--) {
    if (tagVersionAtLeast(version, `${CDC_LINES[i]}.0`) !== false) return CDC_LINES[i];
  }
  return CDC_LINES[0];
}

const at = (line: CdcLine) => CDC_LINES.indexOf(line);
const within = (line: CdcLine, since: CdcLine | undefined, until: CdcLine | undefined) =>
  at(line) >= at(since ?? CDC_LINES[0]) && (until === undefined || at(line) < at(until));

function specOf(node: FieldTree[string]): FieldSpec {
  return typeof node === 'object' && !Array.isArray(node) && '$' in node ? (node as FieldSpec) : { $: node as FieldSpec['$'] };
}

function namesLines(spec: FieldSpec): boolean {
  return spec.since !== undefined || spec.until !== undefined || spec.classic !== undefined || spec.new !== undefined;
}

/** Whether the field, whose parent is read, is read by this line and architecture. */
function readAt(spec: FieldSpec, line: CdcLine, newArchitecture: boolean): boolean {
  if (!namesLines(spec)) return true;
  const classic = spec.classic !== false && within(line, spec.since, spec.until);
  if (!newArchitecture) return classic;
  if (spec.new === false) return false;
  if (spec.new) return within(line, spec.new[0], spec.new[1]);
  return classic;
}

function enumAt(values: readonly EnumValue[], line: CdcLine, newArchitecture: boolean): string[] {
  return values.flatMap((v) => {
    if (typeof v === 'string') return [v];
    const [value, since, only] = v as readonly [string, CdcLine, 'new'?];
    return within(line, since, undefined) && (only !== 'new' || newArchitecture) ? [value] : [];
  });
}

function treeAt(tree: FieldTree, line: CdcLine, newArchitecture: boolean): FieldsAt {
  const out: Record<string, FieldAt> = {};
  for (const [name, node] of Object.entries(tree)) {
    const spec = specOf(node);
    if (!readAt(spec, line, newArchitecture)) continue;
    const t = spec.$;
    const type =
      typeof t === 'string'
        ? t
        : Array.isArray(t)
          ? ([treeAt(t[0], line, newArchitecture)] as const)
          : treeAt(t as FieldTree, line, newArchitecture);
    out[name] = { type, spec, ...(spec.enum && { enum: enumAt(spec.enum, line, newArchitecture) }) };
  }
  return out;
}

/** The replica config fields a TiCDC version reads. */
export function replicaConfigFieldsAt(version: string, options: { newArchitecture?: boolean } = {}): FieldsAt {
  return treeAt(REPLICA_CONFIG_FIELDS, cdcLineOf(version), options.newArchitecture ?? false);
}

/** Why a field that `version` does not read is still known: the release or architecture that reads it. */
function otherRelease(spec: FieldSpec, name: string, line: CdcLine, version: string, newArchitecture: boolean): string {
  const cluster = `this cluster's TiCDC is ${version}${newArchitecture ? ' (new architecture)' : ''}`;
  const lines = (arch: boolean) => CDC_LINES.filter((l) => (!arch || NEW_ARCHITECTURE_LINES.includes(l)) && readAt(spec, l, arch));
  const mine = lines(newArchitecture);
  if (mine.length === 0) {
    return newArchitecture
      ? `\`${name}\` is not read by TiCDC's new architecture; ${cluster}`
      : `\`${name}\` is read only by TiCDC's new architecture; ${cluster}`;
  }
  const later = mine.find((l) => at(l) > at(line));
  if (later !== undefined) return `\`${name}\` is read from TiCDC v${later}; ${cluster}`;
  const gone = CDC_LINES[at(mine[mine.length - 1]) + 1];
  const now = spec.renamed ? ` (it is \`${spec.renamed}\` since)` : '';
  return `\`${name}\` is not read since TiCDC v${gone}${now}; ${cluster}`;
}

/** Whether the field is known in any release or architecture (its parent being read). */
function knownAnywhere(tree: FieldTree | undefined, name: string): FieldSpec | undefined {
  if (tree === undefined || !Object.hasOwn(tree, name)) return undefined;
  return specOf(tree[name]);
}

const RANGES: Partial<Record<Leaf, readonly [number, number]>> = {
  int16: [-32768, 32767],
  int32: [-2147483648, 2147483647],
  uint: [0, 2 ** 64 - 1],
  integer: [-(2 ** 63), 2 ** 63 - 1],
};

const EXPECTED: Record<Leaf, string> = {
  boolean: 'a boolean (true or false)',
  integer: 'an integer',
  uint: 'an integer of at least 0',
  int16: 'an integer from -32768 to 32767',
  int32: 'an integer from -2147483648 to 2147483647',
  number: 'a number',
  string: 'a string',
  duration: 'a duration such as "10m" or "1h30m" (or a number of nanoseconds)',
  'string[]': 'a list of strings',
  'integer[]': 'a list of integers',
  'uint[]': 'a list of integers of at least 0',
};

/** A Go duration as `time.ParseDuration` takes it. */
const DURATION = /^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$/;

/** A Kafka topic expression (pingcap/tiflow cdc/sink/dmlsink/mq/dispatcher/topic/expression.go `Validate`). */
const KAFKA_TOPIC = /^[A-Za-z0-9._-]*(\{schema\})?([A-Za-z0-9._-]*\{table\})?[A-Za-z0-9._-]*$/;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `the string ${quoted(value)}`;
  return String(value);
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function leafFits(leaf: Leaf, value: unknown): boolean {
  switch (leaf) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'duration':
      return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && DURATION.test(value));
    case 'string[]':
    case 'integer[]':
    case 'uint[]':
      return false; // lists are checked item by item
    default: {
      const [min, max] = RANGES[leaf] ?? [-Infinity, Infinity];
      return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
    }
  }
}

interface Walk {
  readonly line: CdcLine;
  readonly version: string;
  readonly newArchitecture: boolean;
  readonly sinkScheme?: string;
  readonly issues: SpecIssue[];
}

const CREDENTIAL_HOME = 'keep it out of the document (it is kept in Git) and name the Secret that holds it in `spec.sinkCredentials`';

function checkEnum(w: Walk, path: string, name: string, field: FieldAt, value: string): void {
  if (field.enum === undefined) return;
  const spec = field.spec;
  if (name === 'partition' && SINK_SCHEMES[w.sinkScheme?.toLowerCase() ?? '']?.family === 'pulsar') return;
  const compare = spec.anyCase ? value.trim().toLowerCase() : value;
  if (field.enum.includes(compare)) return;
  const later = (spec.enum ?? []).find((v) => typeof v !== 'string' && v[0] === compare);
  if (later !== undefined && typeof later !== 'string') {
    const newOnly = later[2] === 'new' && !w.newArchitecture ? ' (new architecture)' : '';
    w.issues.push({
      path,
      message: `${quoted(value)} is read from TiCDC v${later[1]}${newOnly}; this cluster's TiCDC is ${w.version}`,
    });
    return;
  }
  const hint = suggest(
    value,
    field.enum.filter((v) => v !== ''),
  );
  w.issues.push({
    path,
    message: `${quoted(value)} is not one of ${field.enum.map((v) => quoted(v)).join(', ')}${hint ? `; did you mean ${quoted(hint)}?` : ''}`,
  });
}

function checkString(w: Walk, path: string, name: string, field: FieldAt, value: string): void {
  const spec = field.spec;
  if (spec.secret && value !== '') {
    w.issues.push({ path, message: `\`${name}\` is a credential: ${CREDENTIAL_HOME}` });
    return;
  }
  checkEnum(w, path, name, field, value);
  if ((spec.format === 'storage' || spec.format === 'redo-storage') && value !== '') {
    const schemes = spec.format === 'redo-storage' ? REDO_STORAGE_SCHEMES : undefined;
    w.issues.push(...storageUriIssues(value, path, schemes));
  }
  if (spec.format === 'topic' && SINK_SCHEMES[w.sinkScheme?.toLowerCase() ?? '']?.family === 'kafka' && !KAFKA_TOPIC.test(value)) {
    w.issues.push({
      path,
      message: `${quoted(value)} is no Kafka topic expression: letters, digits, '.', '_' and '-', with at most one {schema} and then one {table}`,
    });
  }
}

function checkValue(w: Walk, path: string, name: string, field: FieldAt, value: unknown): void {
  if (value === null) return; // Go leaves the default in place
  const type = field.type;
  if (typeof type === 'string') {
    if (type.endsWith('[]')) {
      if (!Array.isArray(value)) {
        w.issues.push({ path, message: `expected ${EXPECTED[type]}, got ${describe(value)}` });
        return;
      }
      const item = type.slice(0, -2) as Leaf;
      value.forEach((v, i) => {
        if (!leafFits(item, v)) w.issues.push({ path: `${path}[${i}]`, message: `expected ${EXPECTED[item]}, got ${describe(v)}` });
      });
      return;
    }
    if (!leafFits(type, value)) {
      w.issues.push({ path, message: `expected ${EXPECTED[type]}, got ${describe(value)}` });
      return;
    }
    if (typeof value === 'string') checkString(w, path, name, field, value);
    return;
  }
  const tree = field.spec.$;
  if (Array.isArray(type)) {
    if (!Array.isArray(value)) {
      w.issues.push({ path, message: `expected a list of mappings, got ${describe(value)}` });
      return;
    }
    const all = (tree as readonly [FieldTree])[0];
    value.forEach((v, i) => walk(w, `${path}[${i}]`, (type as readonly [FieldsAt])[0], all, v));
    return;
  }
  walk(w, path, type as FieldsAt, tree as FieldTree, value);
}

function walk(w: Walk, path: string, fields: FieldsAt, all: FieldTree | undefined, value: unknown): void {
  if (!isMapping(value)) {
    w.issues.push({ path, message: `expected a mapping, got ${describe(value)}` });
    return;
  }
  for (const [name, v] of Object.entries(value)) {
    const here = `${path}.${name}`;
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (field !== undefined) {
      checkValue(w, here, name, field, v);
      continue;
    }
    const known = knownAnywhere(all, name);
    if (known !== undefined) {
      w.issues.push({ path: here, message: otherRelease(known, name, w.line, w.version, w.newArchitecture) });
      continue;
    }
    const hint = suggest(name, Object.keys(fields));
    w.issues.push({ path: here, message: `unknown field \`${name}\`${hint ? `; did you mean \`${hint}\`?` : ''}` });
  }
}

/**
 * What is wrong with a Changefeed's replica config for the cluster's TiCDC `version` (an image tag:
 * `v8.5.1`, `latest`, `nightly`): one issue per unknown field, field of another release, wrong type,
 * value outside the enumerated ones, and credential written inline.
 */
export function replicaConfigIssues(config: unknown, version: string, options: ReplicaConfigOptions = {}): SpecIssue[] {
  const newArchitecture = options.newArchitecture ?? false;
  const w: Walk = { line: cdcLineOf(version), version, newArchitecture, sinkScheme: options.sinkScheme, issues: [] };
  if (config === undefined || config === null) return [];
  walk(w, options.path ?? 'spec.replicaConfig', replicaConfigFieldsAt(version, { newArchitecture }), REPLICA_CONFIG_FIELDS, config);
  return w.issues;
}
