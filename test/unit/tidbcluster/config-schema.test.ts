/**
 * A component's config checked against the keys its release reads, on a small schema of the
 * generated shape: a typo with a did-you-mean, a key in the wrong table, a key of a later or an
 * earlier release, a deprecated key, a wrong type, a value outside the enumeration; a release between
 * two lines takes what either reads, one past the newest gets warnings; prefixes left unchecked.
 */
import fc from 'fast-check';
import { parseToml, type TomlTable } from '../../../src/base/toml';
import { configIssues, linesOf, tomlKeyLine } from '../../../src/tidbcluster/config-schema/check';
import { configSchema, uncheckedAnnotationIssues, uncheckedPrefixes } from '../../../src/tidbcluster/config-schema';
import type { ConfigNode, ConfigSchema } from '../../../src/tidbcluster/config-schema/types';

const SCHEMA: ConfigSchema = {
  server: 'tikv',
  sources: { '7.1': 'tikv/tikv v7.1.6', '7.5': 'tikv/tikv v7.5.7', '8.5': 'tikv/tikv v8.5.4' },
  lines: ['7.1', '7.5', '8.5'],
  keys: {
    raftstore: {
      t: 'table',
      k: {
        'apply-pool-size': { t: 'int', o: true },
        'store-pool-size': { t: 'int', o: '7.5' },
        'raft-base-tick-interval': { t: 'duration' },
        'region-split-size': { t: 'size', u: '8.5', r: 'coprocessor.region-split-size' },
        'new-thing': { t: 'bool', s: '8.5' },
        'old-thing': { t: 'bool', dep: '7.5' },
      },
    },
    storage: { t: 'table', k: { engine: { t: 'string', e: ['raft-kv', 'partitioned-raft-kv'], s: '7.1' } } },
    server: { t: 'table', k: { labels: { t: 'map', v: { t: 'string' } }, 'grpc-concurrency': { t: 'int' } } },
    'log-level': { t: 'string', e: ['info', 'warn'], ci: true },
  },
};

const check = (version: string, toml: string, unchecked: string[] = []) => {
  const view = linesOf(SCHEMA, version);
  if (!view) throw new Error('no view');
  return configIssues(SCHEMA, view, parseToml(toml), { path: 'spec.tikv.config', server: 'TiKV', text: toml, unchecked });
};
const messages = (r: { errors: { message: string }[] }) => r.errors.map((e) => e.message);

describe('which lines a release is checked against', () => {
  test('a line, two around a release between lines, the newest past it, none before the oldest', () => {
    expect(linesOf(SCHEMA, 'v7.5.2')).toEqual({ lines: ['7.5'], beyond: false, version: 'v7.5.2' });
    expect(linesOf(SCHEMA, 'v8.1.0')).toEqual({ lines: ['7.5', '8.5'], beyond: false, version: 'v8.1.0' });
    expect(linesOf(SCHEMA, 'v9.0.0')).toEqual({ lines: ['8.5'], beyond: true, version: 'v9.0.0' });
    expect(linesOf(SCHEMA, 'nightly')).toEqual({ lines: ['8.5'], beyond: true, version: 'nightly' });
    expect(linesOf(SCHEMA, 'v6.5.12')).toBeUndefined();
    expect(linesOf(SCHEMA, 'my-build')).toBeUndefined();
  });
});

describe('checking a config', () => {
  test('a typo with a did-you-mean, with its line in the config; a key in another table', () => {
    const toml = '[raftstore]\napply-pool-siz = 2\n\n[server]\napply-pool-size = 4\n';
    expect(messages(check('v8.5.1', toml))).toEqual([
      'raftstore.apply-pool-siz (line 2 of the config): TiKV v8.5.1 reads no key "apply-pool-siz" in [raftstore]; did you mean apply-pool-size? (list it in the annotation tidb-gitops.io/unchecked-config to pass it unchecked)',
      'server.apply-pool-size (line 5 of the config): TiKV v8.5.1 reads no key "apply-pool-size" in [server]; did you mean raftstore.apply-pool-size? (list it in the annotation tidb-gitops.io/unchecked-config to pass it unchecked)',
    ]);
  });

  test('a key of a later release, a key an upgrade drops, a deprecated key as a warning', () => {
    expect(messages(check('v7.5.0', 'raftstore.new-thing = true\n'))).toEqual([
      'raftstore.new-thing (line 1 of the config): raftstore.new-thing is read from TiKV v8.5; this cluster runs v7.5.0',
    ]);
    expect(messages(check('v8.5.0', '[raftstore]\nregion-split-size = "96MiB"\n'))).toEqual([
      'raftstore.region-split-size (line 2 of the config): raftstore.region-split-size is no longer read from TiKV v8.5; this cluster runs v8.5.0: remove it (coprocessor.region-split-size took its place)',
    ]);
    expect(check('v7.1.6', '[raftstore]\nregion-split-size = "96MiB"\n').errors).toEqual([]);
    const old = check('v8.5.0', '[raftstore]\nold-thing = true\n');
    expect(old.errors).toEqual([]);
    expect(old.warnings.map((w) => w.message)).toEqual([
      'raftstore.old-thing (line 2 of the config): raftstore.old-thing is deprecated from TiKV v7.5',
    ]);
  });

  test('wrong types and values outside the enumeration; a map of strings; any case where the server takes it', () => {
    const toml = [
      '[raftstore]',
      'apply-pool-size = "2"',
      'raft-base-tick-interval = 10',
      'region-split-size = "lots"',
      '[storage]',
      'engine = "raft"',
      '[server.labels]',
      'zone = 1',
      '',
    ].join('\n');
    expect(messages(check('v7.5.0', toml))).toEqual([
      'raftstore.apply-pool-size (line 2 of the config): expected an integer, got "2"',
      'raftstore.raft-base-tick-interval (line 3 of the config): expected a duration such as "10s" or "1h30m", got 10',
      'raftstore.region-split-size (line 4 of the config): expected a size such as "512MiB" or "1GB", got "lots"',
      'storage.engine (line 6 of the config): expected one of "raft-kv", "partitioned-raft-kv", got "raft"',
      'server.labels.zone (line 8 of the config): expected a string, got 1',
    ]);
    expect(check('v7.5.0', 'log-level = "INFO"\n[raftstore]\nregion-split-size = 100663296\n').errors).toEqual([]);
  });

  test('between two lines either line may read a key; past the newest, unknown keys are warnings', () => {
    expect(check('v8.1.0', 'raftstore.new-thing = true\nraftstore.region-split-size = "1GB"\n').errors).toEqual([]);
    const beyond = check('v9.1.0', 'raftstore.future-key = 1\n');
    expect(beyond.errors).toEqual([]);
    expect(beyond.warnings.map((w) => w.message)).toEqual([
      'raftstore.future-key (line 1 of the config): TiKV v9.1.0 reads no key "future-key" in [raftstore] (known here up to TiKV v8.5; passed as written)',
    ]);
  });

  test('a config given as a mapping: each problem at its own path', () => {
    const view = linesOf(SCHEMA, 'v8.5.0')!;
    const r = configIssues(SCHEMA, view, { raftstore: { 'apply-pool-siz': 2 } }, { path: 'spec.tikv.config', server: 'TiKV' });
    expect(r.errors).toEqual([
      {
        path: 'spec.tikv.config.raftstore.apply-pool-siz',
        message:
          'TiKV v8.5.0 reads no key "apply-pool-siz" in [raftstore]; did you mean apply-pool-size? (list it in the annotation tidb-gitops.io/unchecked-config to pass it unchecked)',
      },
    ]);
  });

  test('prefixes left unchecked by the annotation, and the annotation itself checked', () => {
    expect(check('v8.5.0', '[raftstore]\nhotfix-key = 1\n', ['raftstore.hotfix-key']).errors).toEqual([]);
    expect(check('v8.5.0', '[raftstore]\nhotfix-key = 1\n', ['raftstore']).errors).toEqual([]);
    expect(check('v8.5.0', '[raftstore]\nhotfix-key = 1\n', ['raft']).errors).toHaveLength(1);
    const annotations = { 'tidb-gitops.io/unchecked-config': 'tikv:raftstore.hotfix-key, pd:schedule, tikv: rocksdb' };
    expect(uncheckedPrefixes(annotations, 'tikv')).toEqual(['raftstore.hotfix-key', 'rocksdb']);
    expect(uncheckedPrefixes(annotations, 'tidb')).toEqual([]);
    expect(
      uncheckedAnnotationIssues({ 'tidb-gitops.io/unchecked-config': 'tikv:raftstore, tiflash:x, oops' }).map((i) => i.message),
    ).toEqual([
      'invalid entry "tiflash:x": expected <component>:<key prefix>, the component one of pd, tikv, tidb (tikv:raftstore.some-key)',
      'invalid entry "oops": expected <component>:<key prefix>, the component one of pd, tikv, tidb (tikv:raftstore.some-key)',
    ]);
  });

  test('the line of a key in TOML text: under its header, dotted, quoted', () => {
    const text =
      '# c\n[raftstore]\na = 1\n\n["server".labels]\nzone = "z"\n[storage]\n"engine" = "raft-kv"\nblock-cache.capacity = "1GB"\n';
    expect(tomlKeyLine(text, ['raftstore', 'a'])).toBe(3);
    expect(tomlKeyLine(text, ['server', 'labels', 'zone'])).toBe(6);
    expect(tomlKeyLine(text, ['storage', 'engine'])).toBe(8);
    expect(tomlKeyLine(text, ['storage', 'block-cache', 'capacity'])).toBe(9);
    expect(tomlKeyLine(text, ['nope'])).toBeUndefined();
  });
});

describe('a schema whose lines all come from one source', () => {
  test('cannot tell releases apart: a typo of a key it reads is an error, the rest warnings that say so', () => {
    const one: ConfigSchema = { ...SCHEMA, sources: { '7.1': 'x@abc', '7.5': 'x@abc', '8.5': 'x@abc' } };
    const view = linesOf(one, 'v7.1.0')!;
    expect(view.oneSource).toBe('x@abc');
    const r = configIssues(one, view, parseToml('[raftstore]\napply-pool-siz = 1\nnew-thing = true\ngone = 1\n'), {
      path: 'p',
      server: 'TiDB',
    });
    expect(r.errors.map((w) => w.message)).toEqual([
      'TiDB v7.1.0 reads no key "apply-pool-siz" in [raftstore]; did you mean apply-pool-size? (list it in the annotation tidb-gitops.io/unchecked-config to pass it unchecked)',
    ]);
    expect(r.warnings.map((w) => w.message)).toEqual([
      'TiDB v7.1.0 reads no key "gone" in [raftstore] (list it in the annotation tidb-gitops.io/unchecked-config to pass it unchecked) (TiDB\'s keys are known here from one source, not per release: x@abc)',
    ]);
  });
});

describe('fuzzed configs against the real schemas', () => {
  const servers = ['pd', 'tikv', 'tidb'] as const;

  test('property: no crash, and no key dropped silently: each unknown key is reported, at its own path', () => {
    for (const server of servers) {
      const schema = configSchema(server);
      const names = new Set<string>();
      const collect = (keys: Readonly<Record<string, ConfigNode>>) => {
        for (const [k, n] of Object.entries(keys)) {
          names.add(k);
          if (n.k) collect(n.k);
        }
      };
      collect(schema.keys);
      const key = fc.oneof(fc.constantFrom(...names), fc.stringMatching(/^[a-z][a-z-]{0,12}$/));
      const leaf = fc.oneof(fc.boolean(), fc.integer(), fc.string({ maxLength: 8 }), fc.constantFrom('10s', '1GB', '512MiB'));
      const { tree } = fc.letrec((tie) => ({
        tree: fc.dictionary(key, fc.oneof({ depthSize: 'small' }, leaf, tie('tree')), { maxKeys: 5 }),
      }));
      const version = fc.constantFrom(...schema.lines.map((l) => `v${l}.0`));
      fc.assert(
        fc.property(tree, version, (config, v) => {
          const view = linesOf(schema, v)!;
          const found = configIssues(schema, view, config as TomlTable, { path: 'c', server });
          const said = new Set([...found.errors, ...found.warnings].map((i) => i.path));
          const visit = (table: Record<string, unknown>, keys: Readonly<Record<string, ConfigNode>> | undefined, parent: string[]) => {
            for (const [k, value] of Object.entries(table)) {
              const path = `c.${[...parent, k].join('.')}`;
              const node = keys && Object.hasOwn(keys, k) ? keys[k] : undefined;
              if (!node) expect(said.has(path)).toBe(true);
              else if (node.t === 'table' && node.k && typeof value === 'object' && value !== null && !said.has(path))
                visit(value as Record<string, unknown>, node.k, [...parent, k]);
            }
          };
          visit(config, schema.keys, []);
        }),
        { numRuns: 150, seed: 53 },
      );
    }
  });
});
