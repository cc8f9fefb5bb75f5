/**
 * The Rust config reader of scripts/generate/config-schema/rust-config.mjs (serde attributes, Option/Vec/HashMap,
 * ReadableSize/ReadableDuration, enums, struct-defining macros, re-exports, online_config attributes) on small
 * inline samples, the per-line merging of scripts/generate/config-schemas.mjs, and facts of the TiKV schema they
 * generated (src/tidbcluster/config-schema/generated/tikv.json).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../../scripts/lib/upstream';
import { inModules } from '../../support/esm-module';
import type { ConfigNode, ConfigSchema } from '../../../src/tidbcluster/config-schema/types';

const RUST_CONFIG = path.join(REPO_ROOT, 'scripts/generate/config-schema/rust-config.mjs');
const ENTRY = path.join(REPO_ROOT, 'scripts/generate/config-schemas.mjs');

/** Runs `body` (an ES module body with `m` = rust-config.mjs, `e` = config-schemas.mjs, `input` = the JSON given) and returns what it prints. */
function inModule<T>(body: string, input: unknown): T {
  return inModules<T>({ m: RUST_CONFIG, e: ENTRY }, body, input);
}

interface Read {
  tree: ConfigNode & { k: Record<string, ConfigNode & { o?: boolean; dep?: boolean }> };
  unread: string[];
}

/** readStruct on in-memory files ({ path: text }) and crates ({ name: dir }). */
const read = (files: Record<string, string>, crates: Record<string, string>, file: string, typeName: string, online: boolean): Read =>
  inModule<Read>(
    `const { files, crates, file, typeName, online } = input;
console.log(JSON.stringify(m.readStruct(m.memorySource(files, crates), file, typeName, { online })));`,
    { files, crates, file, typeName, online },
  );

const CONFIG_RS = `
use std::collections::HashMap;
use util::config::{ReadableDuration, ReadableSize};
use engine::Config as EngineConfig;

#[derive(Clone, Serialize, Deserialize, OnlineConfig)]
#[serde(default)]
#[serde(rename_all = "kebab-case")]
pub struct Config {
    pub apply_pool_size: usize,
    #[online_config(skip)]
    pub data_dir: String,
    #[serde(skip)]
    pub runtime_only: bool,
    #[serde(skip_deserializing)]
    pub not_read: bool,
    /// Deprecated: use apply-pool-size.
    #[online_config(hidden)]
    #[doc(hidden)]
    #[serde(skip_serializing)]
    pub old_pool: usize,
    #[serde(rename = "raftstore")]
    #[online_config(submodule)]
    pub raft_store: Inner,
    #[online_config(skip)]
    pub engine: EngineConfig,
    pub mode: Mode,
    #[serde(alias = "max-size")]
    pub capacity: Option<ReadableSize>,
    pub labels: HashMap<String, String>,
    pub endpoints: Vec<String>,
    pub ratio: f64,
    pub either: Either,
    #[cfg(test)]
    pub test_only: bool,
    // a "quoted // comment" and a lifetime-free char: '/'
    pub missing: NotDefinedAnywhere,
}

#[derive(Clone, Serialize, Deserialize, OnlineConfig)]
#[serde(default, rename_all = "kebab-case")]
pub struct Inner {
    pub tick: ReadableDuration,
    #[deprecated = "The configuration has been moved to raftstore.new_tick."]
    #[online_config(skip)]
    pub old_tick: ReadableDuration,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    RaftKv,
    #[serde(alias = "partitioned-raft-kv")]
    RaftKv2,
    #[serde(rename = "OTHER")]
    Other,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Either {
    Num(u64),
    Text(String),
}

#[cfg(test)]
mod tests {
    #[derive(Serialize, Deserialize)]
    pub struct Inner {
        pub not_this_one: bool,
    }
}
`;

const ENGINE_FILES = {
  'components/engine/src/lib.rs': 'mod cfg;\npub use crate::cfg::Config;\n',
  'components/engine/src/cfg.rs': `
macro_rules! cf_config {
    ($name:ident) => {
        #[derive(Clone, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub struct $name {
            pub block_size: ReadableSize,
            #[serde(with = "compression_serde")]
            pub compression: Compression,
        }
    };
}
cf_config!(DefaultCf);
cf_config!(WriteCf);

#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Config {
    pub defaultcf: DefaultCf,
    pub writecf: WriteCf,
    pub level: i32,
}

pub mod compression_serde {
    pub fn deserialize<'de, D>(d: D) -> Result<Compression, D::Error> {
        match &*value.to_lowercase() {
            "no" => Compression::No,
            "zstd" => Compression::Zstd,
            _ => unreachable!(),
        }
    }
}
`,
};

const CRATES = { app: '', engine: 'components/engine/', util: 'components/util/' };

describe('the Rust config reader', () => {
  const online = read({ 'src/config.rs': CONFIG_RS, ...ENGINE_FILES }, CRATES, 'src/config.rs', 'Config', true);
  const offline = read({ 'src/config.rs': CONFIG_RS, ...ENGINE_FILES }, CRATES, 'src/config.rs', 'Config', false);
  const k = online.tree.k;

  it('names fields as rename_all and rename say, and leaves out skip, skip_deserializing and cfg(test) fields', () => {
    expect(Object.keys(k).sort()).toEqual(
      [
        'apply-pool-size',
        'capacity',
        'data-dir',
        'either',
        'endpoints',
        'engine',
        'labels',
        'max-size',
        'missing',
        'mode',
        'old-pool',
        'ratio',
        'raftstore',
      ].sort(),
    );
  });

  it('types integers, floats, strings, Option<ReadableSize>, ReadableDuration, Vec and HashMap', () => {
    expect(k['apply-pool-size'].t).toBe('int');
    expect(k.ratio.t).toBe('float');
    expect(k['data-dir'].t).toBe('string');
    expect(k.capacity.t).toBe('size');
    expect(k.raftstore.k?.tick.t).toBe('duration');
    expect(k.endpoints).toMatchObject({ t: 'array', i: { t: 'string' } });
    expect(k.labels).toMatchObject({ t: 'map', v: { t: 'string' } });
  });

  it('lists the values of a rename_all enum, with its renames and aliases; an untagged enum is any', () => {
    expect(k.mode.e).toEqual(['OTHER', 'partitioned-raft-kv', 'raft-kv', 'raft-kv2']);
    expect(k.either.t).toBe('any');
  });

  it('keeps aliases as keys of their own, and doc(hidden) fields, marking deprecated ones and where they moved', () => {
    expect(k['max-size']).toEqual(k.capacity);
    expect(k['old-pool'].dep).toBe(true);
    expect(k.raftstore.k?.['old-tick']).toMatchObject({ t: 'duration', dep: true, r: 'raftstore.new-tick' });
    expect(k['old-pool'].r).toBeUndefined();
  });

  it('follows re-exports into other crates and expands struct-defining macros, reading serde(with) string matches', () => {
    const engine = k.engine.k ?? {};
    expect(Object.keys(engine).sort()).toEqual(['defaultcf', 'level', 'writecf']);
    expect(engine.writecf.k?.['block-size'].t).toBe('size');
    expect(engine.defaultcf.k?.compression).toEqual({ t: 'string', e: ['no', 'zstd'], ci: true });
  });

  it('marks online the fields of a registered OnlineConfig struct that are not skipped or hidden, through submodules', () => {
    expect(k['apply-pool-size'].o).toBe(true);
    expect(k['data-dir'].o).toBeUndefined();
    expect(k['old-pool'].o).toBeUndefined();
    expect(k.raftstore.k?.tick.o).toBe(true);
    expect(k.raftstore.k?.['old-tick'].o).toBeUndefined();
    expect(k.engine.k?.level.o).toBeUndefined();
    expect(JSON.stringify(offline.tree)).not.toContain('"o"');
  });

  it('types what it cannot find as any and says so', () => {
    expect(k.missing.t).toBe('any');
    expect(online.unread).toEqual(['missing: type NotDefinedAnywhere (definition not found)']);
  });
});

describe('merging per-line trees', () => {
  const lines = ['7.1', '7.5', '8.1'];
  const merged = inModule<ConfigNode>(`console.log(JSON.stringify(e.mergeNodes(input.trees, input.lines)));`, {
    lines,
    trees: [
      { t: 'table', k: { a: { t: 'int', o: true }, gone: { t: 'bool' }, later: { t: 'int' }, m: { t: 'string', e: ['x'] } } },
      {
        t: 'table',
        k: { a: { t: 'int', o: true }, gone: { t: 'bool', dep: true }, later: { t: 'int' }, m: { t: 'string', e: ['x', 'y'] } },
      },
      { t: 'table', k: { a: { t: 'int', o: true }, later: { t: 'int', o: true }, m: { t: 'string', e: ['x', 'y'] }, z: { t: 'size' } } },
    ],
  });
  const k = merged.k ?? {};

  it('says where a key starts, stops and is deprecated, and sorts keys', () => {
    expect(Object.keys(k)).toEqual(['a', 'gone', 'later', 'm', 'z']);
    expect(k.a).toEqual({ t: 'int', o: true });
    expect(k.gone).toEqual({ t: 'bool', u: '8.1', dep: '7.5' });
    expect(k.z).toEqual({ t: 'size', s: '8.1' });
  });

  it('unites enum values and says from which line a key is online', () => {
    expect(k.m.e).toEqual(['x', 'y']);
    expect(k.later.o).toBe('8.1');
  });
});

describe('the generated TiKV schema', () => {
  const text = readFileSync(path.join(REPO_ROOT, 'src/tidbcluster/config-schema/generated/tikv.json'), 'utf8');
  const schema = JSON.parse(text) as ConfigSchema;
  const at = (key: string): ConfigNode | undefined =>
    key.split('.').reduce<ConfigNode | undefined>((n, part) => n?.k?.[part], { t: 'table', k: schema.keys });

  it('names the tag each line was read at, oldest line first', () => {
    expect(schema.server).toBe('tikv');
    expect(schema.lines.slice(0, 4)).toEqual(['7.1', '7.5', '8.1', '8.5']);
    expect(Object.keys(schema.sources)).toEqual(schema.lines);
    for (const line of schema.lines) expect(schema.sources[line]).toMatch(new RegExp(`^tikv/tikv v${line.replace('.', '\\.')}\\.\\d+ `));
  });

  it('is in canonical form: 2-space JSON with a trailing newline', () => {
    expect(text).toBe(`${JSON.stringify(schema, null, 2)}\n`);
  });

  it('has raftstore.apply-pool-size as an int every line reads and changes online', () => {
    expect(at('raftstore.apply-pool-size')).toEqual({ t: 'int', o: true });
  });

  it('lists the storage engines, the partitioned one under both its names', () => {
    expect(at('storage.engine')?.e).toEqual(expect.arrayContaining(['raft-kv', 'raft-kv2', 'partitioned-raft-kv']));
  });

  it('says where keys were added and removed', () => {
    expect(at('raftstore.report-min-resolved-ts-interval')?.u).toBe('8.1');
    expect(at('raftstore.pd-report-min-resolved-ts-interval')?.u).toBeUndefined();
    expect(at('memory.enable-heap-profiling')?.s).toBe('7.5');
    expect(at('in-memory-engine')?.s).toBe('8.5');
  });

  it('marks deprecated keys, and online ones only in modules the server registers', () => {
    expect(at('log-level')).toMatchObject({ dep: '7.1', r: 'log.level' });
    expect(at('raftstore.region-split-size')).toMatchObject({ dep: '7.5', r: 'coprocessor.region-split-size' });
    expect(at('raftstore.snap-generator-pool-size')?.o).toBe('7.5');
    expect(at('pd.endpoints')).toEqual({ t: 'array', i: { t: 'string' } });
    expect(at('security.ca-path')?.o).toBeUndefined();
    expect(at('server.grpc-concurrency')?.o).toBeUndefined();
  });

  it('reads an internally tagged enum (the encryption master key) as a table of its tag and its variants fields', () => {
    const key = at('security.encryption.master-key');
    expect(key?.t).toBe('table');
    expect(key?.k?.type?.e).toEqual(expect.arrayContaining(['file', 'kms', 'plaintext']));
    expect(at('security.encryption.master-key.path')?.t).toBe('string');
    expect(at('security.encryption.master-key.key-id')?.t).toBe('string');
    expect(at('security.encryption.master-key.gcp.credential-file-path')?.s).toBe('8.1');
  });

  it('reads the raft-engine keys TiKV flattens from the raft-engine crate', () => {
    expect(at('raft-engine.enable')?.t).toBe('bool');
    expect(at('raft-engine.dir')?.t).toBe('string');
    expect(at('raft-engine.purge-threshold')?.t).toBe('size');
  });

  it('reads the RocksDB column family keys the cf_config macro defines, with their compression names', () => {
    for (const cf of ['defaultcf', 'writecf', 'lockcf', 'raftcf']) expect(at(`rocksdb.${cf}.block-size`)?.t).toBe('size');
    expect(at('rocksdb.defaultcf.compression-per-level')).toMatchObject({ t: 'array', i: { t: 'string', ci: true } });
    expect(at('rocksdb.defaultcf.compression-per-level')?.i?.e).toEqual(expect.arrayContaining(['no', 'lz4', 'zstd']));
  });
});
