/**
 * Property-based fuzzing of `render` with fast-check, in process (the CLI's own `main` behind its
 * `guarded` entry), on inputs generated two ways: mutations of the bundled examples (values, types,
 * deletions, unknown fields, YAML-level damage such as tags, aliases, deep nesting, invalid UTF-8)
 * and values generated from the TidbCluster CRD schema at random places under `spec`.
 *
 * Every case checks the CLI's promises: exit 0 or 1, never an internal error or a stack; on failure
 * nothing on stdout, every error line naming the file, the document and a path, and the output
 * directory untouched; on success output that is valid against the Kubernetes schema, byte-equal on a
 * second run, and read back by kubectl unchanged.
 *
 * The seed is fixed, so a failure repeats; `FUZZ_RUNS=N` (cases per generator) and `FUZZ_SEED=S`
 * explore further.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import fc from 'fast-check';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { guarded, main } from '../../src/cli/main';
import schemaFile from '../../src/tidbcluster/generated/tidbcluster.schema.json';
import { assertValidK8sObjects } from '../support/k8s-schema';
import { kubectlRead } from '../support/kubectl-read';
import { operatorExample } from '../../scripts/lib/upstream';
import { KUBECTL, requires } from '../support/requires';

const RUNS = Number(process.env.FUZZ_RUNS ?? 700);
const SEED = Number(process.env.FUZZ_SEED ?? 17);

const EXAMPLES = ['basic', 'basic-tls', 'tiflash'].map((e) => readFileSync(operatorExample(e), 'utf8'));

let TMP: string;
beforeAll(() => {
  TMP = mkdtempSync(join(tmpdir(), 'tidb-gitops-fuzz-'));
});
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Outcome {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (s: string) => (stdout += s), stderr: (s: string) => (stderr += s), readStdin: () => '' };
  const code = guarded(() => main(args, io), io, false);
  return { code, stdout, stderr };
}

const accepted: string[] = [];
const stats = { cases: 0, accepted: 0 };

/** Runs one input through render and checks every promise; returns nothing, throws on a broken one. */
function check(input: string | Buffer): void {
  stats.cases++;
  const dir = join(TMP, 'case');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'out'), { recursive: true });
  const file = join(dir, 'in.yaml');
  writeFileSync(file, input);
  const sentinel = '# an earlier render\n';
  writeFileSync(join(dir, 'out', 'keep.k8s.yaml'), sentinel);

  const r = cli(['render', file, '--controller-image', 'example.com/tidb-gitops:test']);
  expect([0, 1]).toContain(r.code);
  expect(r.stderr).not.toContain('internal error');
  expect(r.stderr).not.toMatch(/\n\s+at /);
  if (r.code !== 0) {
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[lines.length - 1]).toMatch(/^\d+ problems? found; nothing was rendered$/);
    for (const line of lines.slice(0, -1)) {
      if (/: (skipped|warning:) /.test(line)) continue;
      // `file: document N: path (line L): message`, or a file-level line naming the file.
      expect(line.startsWith(`${file}: `)).toBe(true);
      const rest = line.slice(file.length + 2);
      expect(rest).toMatch(/^(document \d+: \S.*?( \(line \d+\))?: .|line \d+: not valid UTF-8 |no Kubernetes object in this file$)/);
    }
    // With -o: the directory is exactly as it was.
    const o = cli(['render', file, '-o', join(dir, 'out')]);
    expect(o.code).toBe(1);
    expect(readdirSync(join(dir, 'out'))).toEqual(['keep.k8s.yaml']);
    expect(readFileSync(join(dir, 'out', 'keep.k8s.yaml'), 'utf8')).toBe(sentinel);
    return;
  }
  stats.accepted++;
  const again = cli(['render', file, '--controller-image', 'example.com/tidb-gitops:test']);
  expect(again.stdout).toBe(r.stdout);
  const objects = parseAllDocuments(r.stdout).map((d) => d.toJS() as Record<string, unknown>);
  assertValidK8sObjects(objects);
  accepted.push(r.stdout);
}

// ---- generator 1: mutations of the examples ---------------------------------------------------------

type Path = (string | number)[];

/** Every path to a value in `v` (the root excluded). */
function paths(v: unknown, at: Path = []): Path[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => [[...at, i], ...paths(x, [...at, i])]);
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => [[...at, k], ...paths(x, [...at, k])]);
  return [];
}

function setIn(root: unknown, path: Path, value: unknown, remove = false): void {
  let node = root as Record<string | number, unknown>;
  for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (remove) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else {
    node[last] = value;
  }
}

/** Values that have broken parsers, scripts and emitters before. */
const nasty = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    2 ** 31,
    2 ** 53 + 1,
    -(2 ** 63),
    1e300,
    0.5,
    '',
    ' ',
    'Cluster.Local',
    'a b',
    'a\nb',
    '$(reboot)',
    '"',
    "'",
    '\\',
    '\u0085',
    '\u007f',
    '\u0000',
    '\u2028',
    '\ufeff',
    'x'.repeat(1100),
    '../../etc',
    '-o',
    '__proto__',
    'constructor',
    'true',
    '1e3',
    '0x1F',
    null,
    true,
    [],
    {},
    [1, 'a', null],
    { a: { b: { c: 1 } } },
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer(),
  fc.jsonValue({ maxDepth: 3 }),
);

const mutation = fc.record({
  example: fc.nat(EXAMPLES.length - 1),
  kind: fc.constantFrom('set', 'delete', 'unknown', 'flip'),
  pick: fc.nat(),
  value: nasty,
  key: fc.oneof(fc.constantFrom('replica', 'extra', '__proto__', 'constructor', '1', 'a/b', 'x'.repeat(70)), fc.string({ maxLength: 12 })),
});

function mutate(m: { example: number; kind: string; pick: number; value: unknown; key: string }): string {
  const doc = parse(EXAMPLES[m.example]) as Record<string, unknown>;
  const all = paths(doc);
  const path = all[m.pick % all.length];
  const current = path.reduce<unknown>((n, p) => (n as Record<string | number, unknown>)[p], doc);
  switch (m.kind) {
    case 'delete':
      setIn(doc, path, undefined, true);
      break;
    case 'unknown': {
      const parentPath = current && typeof current === 'object' && !Array.isArray(current) ? path : path.slice(0, -1);
      const parent = parentPath.reduce<unknown>((n, p) => (n as Record<string | number, unknown>)[p], doc);
      if (parent && typeof parent === 'object' && !Array.isArray(parent))
        Object.defineProperty(parent, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      break;
    }
    case 'flip':
      setIn(
        doc,
        path,
        typeof current === 'string' ? 42 : typeof current === 'number' ? String(current) : typeof current === 'object' ? 'text' : [current],
      );
      break;
    default:
      setIn(doc, path, m.value);
  }
  return stringify(doc, { aliasDuplicateObjects: false });
}

/** Damage at the YAML level, on the text of an example. */
const textDamage = fc.record({
  example: fc.nat(EXAMPLES.length - 1),
  kind: fc.constantFrom('truncate', 'dropLine', 'dupLine', 'tag', 'alias', 'nest', 'bom', 'badUtf8', 'tab', 'docs'),
  at: fc.nat(),
  depth: fc.integer({ min: 50, max: 3000 }),
  tag: fc.constantFrom('!!omap', '!!binary', '!!set', '!!timestamp', '!!float', '!custom', '!!str', '!!int'),
});

function damage(d: { example: number; kind: string; at: number; depth: number; tag: string }): string | Buffer {
  const text = EXAMPLES[d.example];
  const lines = text.split('\n');
  const i = d.at % lines.length;
  switch (d.kind) {
    case 'truncate':
      return text.slice(0, d.at % text.length);
    case 'dropLine':
      return lines.filter((_, j) => j !== i).join('\n');
    case 'dupLine':
      return [...lines.slice(0, i + 1), lines[i], ...lines.slice(i + 1)].join('\n');
    case 'tag':
      return lines.map((l, j) => (j === i ? l.replace(/: (\S)/, `: ${d.tag} $1`) : l)).join('\n');
    case 'alias':
      return text.replace(/spec:\n/, 'spec:\n  x-anchor: &a {replicas: 1, again: *a}\n');
    case 'nest': {
      const deep =
        d.at % 2 === 0
          ? `${'['.repeat(d.depth)}${']'.repeat(d.depth)}`
          : Array.from({ length: Math.min(d.depth, 400) }, (_, k) => `${'  '.repeat(k)}k:`).join('\n');
      return text.replace(/spec:\n/, `spec:\n  config:\n    deep: ${d.at % 2 === 0 ? deep : `\n${deep.replace(/^/gm, '      ')} 1`}\n`);
    }
    case 'bom':
      return `\ufeff${text}`;
    case 'badUtf8':
      return Buffer.concat([
        Buffer.from(text.slice(0, d.at % text.length)),
        Buffer.from([0xff, 0xc3, 0x28]),
        Buffer.from(text.slice(d.at % text.length)),
      ]);
    case 'tab':
      return lines.map((l, j) => (j === i ? l.replace(/^ +/, '\t') : l)).join('\n');
    default:
      return `${text}\n---\n${text}\n---\nkind: ConfigMap\n---\n[]\n`;
  }
}

// ---- generator 2: values from the CRD schema at random places under spec ------------------------------

interface SchemaNode {
  type?: string;
  properties?: Record<string, number>;
  items?: number;
  additionalProperties?: number | boolean;
  enum?: unknown[];
  format?: string;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}
const SCHEMA = schemaFile as unknown as { root: number; nodes: SchemaNode[] };
const node = (i: number) => SCHEMA.nodes[i];
const SPEC = node(node(SCHEMA.root).properties!.spec);

/** A value of the shape `n` describes, depth-bounded; `choices` drives every decision. */
function valueFor(n: SchemaNode, choices: number[], depth = 0): unknown {
  const c = () => choices.pop() ?? 0;
  if (n.enum) return n.enum[c() % n.enum.length];
  if (n['x-kubernetes-int-or-string']) return c() % 2 === 0 ? c() % 70000 : ['100Gi', '50%', 'abc', '1.5', ''][c() % 5];
  switch (n.type) {
    case 'boolean':
      return c() % 2 === 0;
    case 'integer':
      return [0, 1, 3, -1, 65535, 65536, 2 ** 31, 30][c() % 8];
    case 'number':
      return [0, 0.5, 1e9][c() % 3];
    case 'string':
      return ['', 'a', 'pingcap/tidb', 'v8.5.0', '10Gi', 'a b', 'UPPER', 'x.y/z', 'http://pd:2379', '\u0085', 'ClusterIP'][c() % 11];
    case 'array':
      return depth > 4 || n.items === undefined ? [] : Array.from({ length: c() % 3 }, () => valueFor(node(n.items!), choices, depth + 1));
    case 'object': {
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      const props = Object.entries(n.properties ?? {});
      if (props.length === 0) {
        if (typeof n.additionalProperties === 'number')
          for (let k = 0; k < c() % 3; k++) out[`k${k}`] = valueFor(node(n.additionalProperties), choices, depth + 1);
        return out;
      }
      for (let k = 0; k < c() % 4; k++) {
        const [name, child] = props[c() % props.length];
        out[name] = valueFor(node(child), choices, depth + 1);
      }
      return out;
    }
    default:
      return n['x-kubernetes-preserve-unknown-fields'] ? { a: c() } : null;
  }
}

/** A path under spec (1 to 4 levels) with the schema node there. */
function schemaPlace(choices: number[]): { path: string[]; node: SchemaNode } {
  let n = SPEC;
  const path: string[] = [];
  const depth = 1 + ((choices.pop() ?? 0) % 4);
  for (let d = 0; d < depth && n.properties; d++) {
    const entries = Object.entries(n.properties);
    const [name, child] = entries[(choices.pop() ?? 0) % entries.length];
    path.push(name);
    n = node(child);
  }
  return { path, node: n };
}

function fromSchema(choices: number[]): string {
  const doc = parse(EXAMPLES[choices.pop()! % EXAMPLES.length]) as { spec: Record<string, unknown> };
  const { path, node: n } = schemaPlace(choices);
  let at: Record<string, unknown> = doc.spec;
  for (const p of path.slice(0, -1)) {
    if (!at[p] || typeof at[p] !== 'object' || Array.isArray(at[p])) at[p] = {};
    at = at[p] as Record<string, unknown>;
  }
  at[path[path.length - 1]] = valueFor(n, choices);
  return stringify(doc, { aliasDuplicateObjects: false });
}

// ---- the suite --------------------------------------------------------------------------------------

describe(`render under fuzzing (seed ${SEED}, ${RUNS} cases per generator)`, () => {
  test('mutated values, types, deletions and unknown fields of the examples', () => {
    fc.assert(
      fc.property(mutation, (m) => check(mutate(m))),
      { seed: SEED, numRuns: RUNS },
    );
  }, 600_000);

  test('YAML-level damage: truncation, tags, recursive aliases, deep nesting, BOM, invalid UTF-8, tabs, many documents', () => {
    fc.assert(
      fc.property(textDamage, (d) => check(damage(d))),
      { seed: SEED, numRuns: Math.ceil(RUNS / 2) },
    );
  }, 600_000);

  test('values generated from the CRD schema at random places under spec', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(1_000_000), { minLength: 80, maxLength: 80 }), (choices) => check(fromSchema([...choices]))),
      { seed: SEED, numRuns: RUNS },
    );
  }, 600_000);

  const withKubectl = requires(KUBECTL).test;
  withKubectl(
    'every accepted render reads back through kubectl exactly as written',
    () => {
      expect(accepted.length).toBeGreaterThan(20);
      // One kubectl run for all of them (deduplicated: many mutations render the same).
      const unique = [...new Set(accepted)];
      const read = kubectlRead(unique.join(''));
      const written = unique.flatMap((s) => parseAllDocuments(s).map((d) => d.toJS()));
      expect(read).toEqual(written);
    },
    120_000,
  );

  afterAll(() => {
    // Both outcomes must be common, or the generators test only one side.
    expect(stats.accepted).toBeGreaterThan(stats.cases * 0.1);
    expect(stats.accepted).toBeLessThan(stats.cases * 0.9);
    console.log(`fuzz: ${stats.cases} cases, ${stats.accepted} accepted, seed ${SEED}`);
  });
});
