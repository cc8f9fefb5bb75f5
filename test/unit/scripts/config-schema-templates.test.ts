/**
 * The config-template reader of scripts/generate/config-schema/templates.mjs on small inline samples: commented
 * headers and keys, prose lines that are not keys, arrays of tables, quoted and dotted keys, and the lookup of a
 * template key in a schema (per-line "s"/"u", maps, "any" nodes, arrays of tables).
 */
import path from 'node:path';
import { REPO_ROOT } from '../../../scripts/lib/upstream';
import { inModules } from '../../support/esm-module';
import type { ConfigSchema } from '../../../src/tidbcluster/config-schema/types';

const TEMPLATES = path.join(REPO_ROOT, 'scripts/generate/config-schema/templates.mjs');

/** Runs `body` (an ES module body with `m` = templates.mjs and `input` = the JSON given) and returns what it prints as JSON. */
function inModule<T>(body: string, input: unknown): T {
  return inModules<T>({ m: TEMPLATES }, body, input);
}

interface Parsed {
  tables: { path: string[]; array: boolean; line: number }[];
  keys: { path: string[]; line: number }[];
}

const parse = (text: string): Parsed => inModule<Parsed>('console.log(JSON.stringify(m.parseTemplate(input)));', text);

const SAMPLE = `# Server Configuration.
## Human-readable name.
# name = ""
log-level = "info"

[server]
## The address to listen on. Example: addr = "0.0.0.0:1" is prose after a colon.
# addr = "127.0.0.1:20160"
##   grpc-concurrency = 5
#grpc-concurrency = 5

## [b,c), [c,d) are ranges, not headers
## value  =>  meaning
## 1      =>  12.50 %
## a == b is a comparison
# labels = {}

## [storage.block-cache]
# capacity = "1GB"
# "quoted.key" = 1
# inner.dotted = true

[[security.encryption.keys]]
# type = "file"
`;

describe('parseTemplate', () => {
  const p = parse(SAMPLE);
  const keys = p.keys.map((k) => k.path.join('|'));

  it('reads commented and plain keys under the table last opened, each once, with its line', () => {
    expect(keys).toEqual([
      'name',
      'log-level',
      'server|addr',
      'server|grpc-concurrency',
      'server|labels',
      'storage|block-cache|capacity',
      'storage|block-cache|quoted.key',
      'storage|block-cache|inner|dotted',
      'security|encryption|keys|type',
    ]);
    expect(p.keys.find((k) => k.path.join('|') === 'server|grpc-concurrency')?.line).toBe(9);
  });

  it('takes headers with or without leading #s, and arrays of tables', () => {
    expect(p.tables).toEqual([
      { path: ['server'], array: false, line: 6 },
      { path: ['storage', 'block-cache'], array: false, line: 18 },
      { path: ['security', 'encryption', 'keys'], array: true, line: 23 },
    ]);
  });

  it('does not take prose (`=>` tables, `==`, bracketed ranges) for keys or headers', () => {
    expect(keys).not.toContain('server|value');
    expect(keys).not.toContain('server|1');
    expect(keys).not.toContain('server|a');
    expect(p.tables.map((t) => t.path[0])).not.toContain('b,c');
  });
});

describe('lookup', () => {
  const schema: ConfigSchema = {
    server: 'tikv',
    sources: { '7.1': 'tikv/tikv v7.1.6', '8.5': 'tikv/tikv v8.5.7' },
    lines: ['7.1', '8.5'],
    keys: {
      name: { t: 'string' },
      old: { t: 'int', u: '8.5' },
      fresh: { t: 'bool', s: '8.5' },
      labels: { t: 'map', v: { t: 'string' } },
      blob: { t: 'any' },
      rules: { t: 'array', i: { t: 'table', k: { id: { t: 'string' } } } },
      server: { t: 'table', k: { addr: { t: 'string' } } },
    },
  };
  const look = (parts: string[], line: string): string | null =>
    inModule<string | null>('console.log(JSON.stringify(m.lookup(input.schema, input.parts, input.line)));', { schema, parts, line });

  it('reads a key only in the lines from its "s" on and before its "u"', () => {
    expect(look(['old'], '7.1')).toBeNull();
    expect(look(['old'], '8.5')).toBe('old is read only in [7.1, 8.5)');
    expect(look(['fresh'], '7.1')).toBe('fresh is read only in [8.5, now)');
    expect(look(['fresh'], '8.5')).toBeNull();
  });

  it('says which part is missing or not a table', () => {
    expect(look(['nope'], '8.5')).toBe('no top-level key nope');
    expect(look(['server', 'port'], '8.5')).toBe('no key server.port');
    expect(look(['name', 'x'], '8.5')).toBe('name is a string, not a table');
  });

  it('takes any key below a map or an "any" node, and looks into arrays of tables', () => {
    expect(look(['labels', 'zone'], '8.5')).toBeNull();
    expect(look(['blob', 'a', 'b'], '8.5')).toBeNull();
    expect(look(['rules', 'id'], '8.5')).toBeNull();
    expect(look(['rules', 'other'], '8.5')).toBe('no key rules.other');
  });

  it('finds the tag in a "sources" text', () => {
    expect(inModule<string>('console.log(JSON.stringify(m.sourceTag(input)));', 'tikv/pd v8.5.7 (with pingcap/log ca232912c9f3)')).toBe(
      'v8.5.7',
    );
  });
});
