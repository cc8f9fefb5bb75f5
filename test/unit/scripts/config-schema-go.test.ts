/**
 * The Go config reader of scripts/generate/config-schema/go-config.mjs (struct fields with toml tags, embedded
 * structs, pointer/slice/map types, named types across packages, per-line merging) on small inline samples, and
 * facts of the PD and TiDB schemas it generated (src/tidbcluster/config-schema/generated/{pd,tidb}.json).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../../scripts/lib/upstream';
import { inModules } from '../../support/esm-module';
import type { ConfigNode, ConfigSchema } from '../../../src/tidbcluster/config-schema/types';

const GO_CONFIG = path.join(REPO_ROOT, 'scripts/generate/config-schema/go-config.mjs');

/** Runs `body` (an ES module body with `m` = go-config.mjs and `input` = the JSON given) and returns what it prints as JSON. */
function inModule<T>(body: string, input: unknown): T {
  return inModules<T>({ m: GO_CONFIG }, body, input);
}

interface Read {
  keys: Record<string, ConfigNode>;
  deprecated: string[];
  unresolved: string[];
}

/** readGoConfig on in-memory packages: { importPath: [file text] }. */
const read = (packages: Record<string, string[]>, importPath: string, typeName: string, overrides = {}): Read =>
  inModule<Read>(
    `const { packages, importPath, typeName, overrides } = input;
const r = m.readGoConfig({ sources: [m.memorySource(packages)], importPath, typeName, overrides });
console.log(JSON.stringify({ ...r, deprecated: [...r.deprecated].sort() }));`,
    { packages, importPath, typeName, overrides },
  );

const MAIN = `package config

import (
	"time"

	tu "example.com/srv/pkg/typeutil"
	"example.com/srv/pkg/other"
	"example.com/gone/pkg"
)

// Config is the top table.
type Config struct {
	Name      string            \`toml:"name" json:"name"\`
	Port, Alt uint16            \`toml:"port"\`
	Hidden    string            \`toml:"-" json:"hidden"\`
	NoTag     bool              \`json:"no-tag"\`
	lower     int               \`toml:"lower"\`
	Ratio     *float64          \`toml:"ratio"\`
	Labels    map[string]string \`toml:"labels"\`
	Hosts     []string          \`toml:"hosts"\`
	Rules     []*Rule           \`toml:"rules"\`
	Wait      time.Duration     \`toml:"wait"\`
	Lease     tu.Duration       \`toml:"lease"\`
	Quota     tu.ByteSize       \`toml:"quota"\`
	Mode      Mode              \`toml:"mode"\`
	Sub       other.Section     \`toml:"sub"\`
	Missing   pkg.Thing         \`toml:"missing"\`
	// OldKey is deprecated: use name.
	OldKey string \`toml:"old-key"\`
	Inline  \`toml:",inline"\`
	Embedded
	Named \`toml:"named"\`
	Fn    func(int) error \`toml:"-"\`
	Anon  struct {
		A int \`toml:"a"\`
	} \`toml:"anon"\`
}

type (
	Mode string
	Rule struct {
		Key string \`toml:"key"\`
	}
)

type Inline struct {
	FromInline int \`toml:"from-inline"\`
}

type Embedded struct{ FromEmbedded bool \`toml:"from-embedded"\` }

type Named struct {
	X int \`toml:"x"\`
}

func (c *Config) Adjust() { if c.Name == "" { c.Name = "x" } }
`;

const TYPEUTIL = `package typeutil

type Duration struct{ d int64 }

func (d *Duration) UnmarshalText(text []byte) error { return nil }

type ByteSize uint64

func (b *ByteSize) UnmarshalText(text []byte) error { return nil }
`;

const OTHER = `package other

type Section struct {
	Level string \`toml:"level"\`
	Flags []Flag \`toml:"flags"\`
}

type Flag int
`;

const PACKAGES = {
  'example.com/srv/pkg/config': [MAIN],
  'example.com/srv/pkg/typeutil': [TYPEUTIL],
  'example.com/srv/pkg/other': [OTHER],
};

describe('the Go struct reader', () => {
  const r = read(PACKAGES, 'example.com/srv/pkg/config', 'Config');

  it('lists exported fields under their toml names, leaving out `toml:"-"`, untagged and unexported fields', () => {
    expect(Object.keys(r.keys).sort()).toEqual(
      [
        'anon',
        'from-embedded',
        'from-inline',
        'hosts',
        'labels',
        'lease',
        'missing',
        'mode',
        'name',
        'named',
        'old-key',
        'port',
        'quota',
        'ratio',
        'rules',
        'sub',
        'wait',
      ].sort(),
    );
  });

  it('reads basic, pointer, slice and map types, and inlines embedded structs without a toml name', () => {
    expect(r.keys.name).toEqual({ t: 'string' });
    expect(r.keys.port).toEqual({ t: 'int' });
    expect(r.keys.ratio).toEqual({ t: 'float' });
    expect(r.keys.labels).toEqual({ t: 'map', v: { t: 'string' } });
    expect(r.keys.hosts).toEqual({ t: 'array', i: { t: 'string' } });
    expect(r.keys.rules).toEqual({ t: 'array', i: { t: 'table', k: { key: { t: 'string' } } } });
    expect(r.keys['from-inline']).toEqual({ t: 'int' });
    expect(r.keys['from-embedded']).toEqual({ t: 'bool' });
    expect(r.keys.named).toEqual({ t: 'table', k: { x: { t: 'int' } } });
    expect(r.keys.anon).toEqual({ t: 'table', k: { a: { t: 'int' } } });
  });

  it('resolves named types in the package and in imported packages; text-unmarshalled Duration/ByteSize are duration/size', () => {
    expect(r.keys.mode).toEqual({ t: 'string' });
    expect(r.keys.wait).toEqual({ t: 'duration' });
    expect(r.keys.lease).toEqual({ t: 'duration' });
    expect(r.keys.quota).toEqual({ t: 'size' });
    expect(r.keys.sub).toEqual({ t: 'table', k: { level: { t: 'string' }, flags: { t: 'array', i: { t: 'int' } } } });
  });

  it('reads a type it cannot find as "any", naming it, and marks fields documented as deprecated', () => {
    expect(r.keys.missing).toEqual({ t: 'any' });
    expect(r.unresolved).toEqual(['example.com/gone/pkg.Thing']);
    expect(r.deprecated).toEqual(['old-key']);
  });

  it('takes an override for a named type', () => {
    const o = read(PACKAGES, 'example.com/srv/pkg/config', 'Config', { 'example.com/srv/pkg/other.Section': { t: 'any' } });
    expect(o.keys.sub).toEqual({ t: 'any' });
  });
});

describe('merging release lines', () => {
  it('gives "s"/"u" relative to the parent, "dep" from the first deprecating line, "o" on keys from the first online line', () => {
    const merged = inModule<Record<string, ConfigNode>>(
      `const online = (on) => (k) => on.includes(k);
const perLine = input.map((l) => ({ line: l.line, keys: l.keys, deprecated: new Set(l.dep), online: online(l.on) }));
console.log(JSON.stringify(m.mergeLines(perLine)));`,
      [
        { line: '7.1', keys: { a: { t: 'int' }, old: { t: 'bool' }, n: { t: 'int' }, b: { t: 'bool' } }, dep: [], on: [] },
        {
          line: '7.5',
          keys: { a: { t: 'int' }, old: { t: 'bool' }, n: { t: 'int' }, b: { t: 'bool' }, sec: { t: 'table', k: { x: { t: 'int' } } } },
          dep: ['old'],
          on: ['a'],
        },
        {
          line: '8.1',
          keys: { a: { t: 'int' }, n: { t: 'size' }, b: { t: 'string' }, sec: { t: 'table', k: { x: { t: 'int' }, y: { t: 'string' } } } },
          dep: [],
          on: ['a', 'sec', 'sec.x'],
        },
      ],
    );
    expect(merged).toEqual({
      a: { t: 'int', o: '7.5' },
      b: { t: 'any' },
      n: { t: 'size' },
      old: { t: 'bool', u: '8.1', dep: '7.5' },
      sec: { t: 'table', k: { x: { t: 'int', o: '8.1' }, y: { t: 'string', s: '8.1' } }, s: '7.5' },
    });
  });

  it('reads the sections PD`s config API updates from server/api/config.go', () => {
    const src = `func (h *confHandler) updateConfig(cfg *config.Config, key string, value any) error {
	kp := strings.Split(key, ".")
	switch kp[0] {
	case "schedule":
		if h.svr.IsTTLConfigExist(key) {
			return errors.Errorf("need to clean up TTL first for %s", key)
		}
		return h.updateSchedule(cfg, kp[len(kp)-1], value)
	case "log":
		return h.updateLogLevel(kp, value)
	case "label-property": // not changed
	}
	return errors.Errorf("config prefix %s not found", kp[0])
}
`;
    expect(inModule<string[]>('console.log(JSON.stringify(m.pdOnlineSections(input)));', src)).toEqual(['log', 'schedule']);
  });
});

const schema = (server: string): ConfigSchema =>
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'src/tidbcluster/config-schema/generated', `${server}.json`), 'utf8')) as ConfigSchema;
const at = (s: ConfigSchema, dotted: string): ConfigNode | undefined =>
  dotted.split('.').reduce<ConfigNode | undefined>((n, k) => n?.k?.[k], { t: 'table', k: s.keys });

describe('the generated PD schema', () => {
  const pd = schema('pd');

  it('covers 7.1, 7.5, 8.1, 8.5 and a newer line, each from a tikv/pd tag of that line', () => {
    expect(pd.server).toBe('pd');
    expect(pd.lines.slice(0, 4)).toEqual(['7.1', '7.5', '8.1', '8.5']);
    expect(pd.lines.length).toBe(5);
    for (const line of pd.lines) expect(pd.sources[line]).toMatch(new RegExp(`^tikv/pd v${line.replace('.', '\\.')}\\.\\d+ `));
  });

  it('has the schedule and replication keys PD`s API changes online', () => {
    expect(at(pd, 'schedule.leader-schedule-limit')).toEqual({ t: 'int', o: true });
    expect(at(pd, 'replication.max-replicas')).toEqual({ t: 'int', o: true });
    expect(at(pd, 'schedule.max-store-down-time')).toMatchObject({ t: 'duration', o: true });
    expect(at(pd, 'log.level')).toMatchObject({ t: 'string', o: true });
    expect(at(pd, 'log.format')?.o).toBeUndefined();
    expect(at(pd, 'replication-mode.dr-auto-sync.label-key')).toEqual({ t: 'string', o: true });
    expect(at(pd, 'replication-mode.dr-auto-sync')?.o).toBeUndefined();
  });

  it('reads typed non-online keys: security, sizes, labels; leaves out `toml:"-"` and untagged fields', () => {
    expect(at(pd, 'security.cacert-path')).toEqual({ t: 'string' });
    expect(at(pd, 'quota-backend-bytes')).toEqual({ t: 'size' });
    expect(at(pd, 'labels')).toEqual({ t: 'map', v: { t: 'string' } });
    expect(at(pd, 'name')?.o).toBeUndefined();
    expect(pd.keys['force-new-cluster']).toBeUndefined();
    expect(pd.keys['warning-msgs']).toBeUndefined();
  });

  it('marks keys added after 7.1 with their first line', () => {
    expect(at(pd, 'keyspace.wait-region-split')).toMatchObject({ t: 'bool', s: '7.5' });
    expect(at(pd, 'micro-service')).toMatchObject({ t: 'table', s: '8.1' });
    expect(at(pd, 'log-level')).toMatchObject({ t: 'string', dep: '7.1' });
  });
});

describe('the generated TiDB schema', () => {
  const tidb = schema('tidb');

  it('covers the same lines as PD, saying where each came from', () => {
    expect(tidb.lines).toEqual(schema('pd').lines);
    for (const line of tidb.lines) expect(tidb.sources[line]).toMatch(/^pingcap\/tidb /);
  });

  it('has typed keys of the sections and of the client sections read from tikv/client-go', () => {
    expect(at(tidb, 'performance.max-procs')).toEqual({ t: 'int' });
    expect(at(tidb, 'security.ssl-ca')).toEqual({ t: 'string' });
    expect(at(tidb, 'log.level')).toEqual({ t: 'string' });
    expect(at(tidb, 'log.file.max-size')).toEqual({ t: 'int' });
    expect(at(tidb, 'log.disable-timestamp')).toMatchObject({ t: 'bool', dep: '7.1' });
    expect(at(tidb, 'tikv-client.copr-cache.capacity-mb')).toEqual({ t: 'float' });
    expect(at(tidb, 'opentracing.sampler.sampling-refresh-interval')).toEqual({ t: 'duration' });
    expect(at(tidb, 'instance.tidb_enable_ddl')).toEqual({ t: 'bool' });
    expect(tidb.keys['txn-local-latches']).toBeUndefined();
  });

  it('marks nothing online: TiDB`s config file is not changed online', () => {
    expect(JSON.stringify(tidb.keys)).not.toContain('"o":');
  });
});
