import {
  TomlEncodeError,
  TomlFloat,
  TomlSyntaxError,
  TomlTable,
  deletePath,
  encodeToml,
  getPath,
  hasPath,
  isTomlFloat,
  mergeTables,
  parseToml,
  setPath,
  tomlEqual,
  tomlFloat,
  tomlKindOf,
} from '../../../src/base/toml';

/** Joins lines and adds the trailing newline every encoded document ends with. */
const doc = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('encodeToml layout (operator / BurntSushi v0.3.1 style)', () => {
  it('encodes the PD example from the brief exactly', () => {
    const input: TomlTable = {
      replication: { 'location-labels': ['zone', 'rack'], 'max-replicas': 5 },
      lease: 3,
      log: { level: 'info', file: { 'max-backups': 3 } },
    };
    expect(encodeToml(input)).toBe(
      'lease = 3\n' +
        '\n' +
        '[log]\n' +
        '  level = "info"\n' +
        '  [log.file]\n' +
        '    max-backups = 3\n' +
        '\n' +
        '[replication]\n' +
        '  location-labels = ["zone", "rack"]\n' +
        '  max-replicas = 5\n',
    );
  });

  it('indents nested tables per level and separates only top-level tables', () => {
    const input: TomlTable = {
      storage: { 'block-cache': { shared: true } },
      readpool: { storage: { 'high-concurrency': 4 }, coprocessor: { 'high-concurrency': 8 } },
    };
    expect(encodeToml(input)).toBe(
      doc(
        '[readpool]',
        '  [readpool.coprocessor]',
        '    high-concurrency = 8',
        '  [readpool.storage]',
        '    high-concurrency = 4',
        '',
        '[storage]',
        '  [storage.block-cache]',
        '    shared = true',
      ),
    );
  });

  it('indents three levels deep', () => {
    expect(encodeToml({ a: { b: { c: { d: 1 } } } })).toBe(doc('[a]', '  [a.b]', '    [a.b.c]', '      d = 1'));
  });

  it('encodes an empty config as an empty string', () => {
    expect(encodeToml({})).toBe('');
  });

  it('writes headers for empty tables and no leading blank line', () => {
    expect(encodeToml({ a: {} })).toBe('[a]\n');
    expect(encodeToml({ a: {}, b: { c: {} } })).toBe(doc('[a]', '', '[b]', '  [b.c]'));
  });

  it('writes plain keys before sub-tables even when they sort later', () => {
    expect(encodeToml({ z: 1, a: { b: 2, y: { c: 3 }, x: 'after-b' } })).toBe(
      doc('z = 1', '', '[a]', '  b = 2', '  x = "after-b"', '  [a.y]', '    c = 3'),
    );
  });

  it('sorts keys by byte order (like Go sort.Strings), not locale', () => {
    expect(encodeToml({ a: 1, B: 2, _: 3, '-': 4, '0': 5 })).toBe(doc('- = 4', '0 = 5', 'B = 2', '_ = 3', 'a = 1'));
  });

  it('encodes scalars: strings quoted and escaped, ints and bools bare', () => {
    const input: TomlTable = { s: 'a"b\\c\nd\te\r\u0001\u007f\b\f', i: -42, t: true, f: false, u: 'ünï €' };
    expect(encodeToml(input)).toBe(
      doc('f = false', 'i = -42', 's = "a\\"b\\\\c\\nd\\te\\r\\u0001\\u007F\\b\\f"', 't = true', 'u = "ünï €"'),
    );
  });

  it('writes arrays inline with ", " separators, including nested, empty and mixed arrays', () => {
    const input: TomlTable = { labels: ['node', 'rack'], nested: [[1, 2], ['x']], empty: [], mixed: [1, 'a', true] };
    expect(encodeToml(input)).toBe(doc('empty = []', 'labels = ["node", "rack"]', 'mixed = [1, "a", true]', 'nested = [[1, 2], ["x"]]'));
  });

  it('quotes keys that are not bare keys, in key/values and in headers', () => {
    const input: TomlTable = { 'a.b': 1, '': 2, 'has space': { 'x"y': 3, ok: { é: 4 } } };
    expect(encodeToml(input)).toBe(doc('"" = 2', '"a.b" = 1', '', '["has space"]', '  "x\\"y" = 3', '  ["has space".ok]', '    "é" = 4'));
  });

  it('writes arrays of tables with [[...]] headers and a blank line before each element', () => {
    const input: TomlTable = {
      top: 1,
      servers: [
        { name: 'a', port: 1 },
        { name: 'b', sub: { x: 1 } },
      ],
    };
    expect(encodeToml(input)).toBe(
      doc('top = 1', '', '[[servers]]', '  name = "a"', '  port = 1', '', '[[servers]]', '  name = "b"', '  [servers.sub]', '    x = 1'),
    );
  });

  it('indents nested arrays of tables and orders them among sub-tables by key', () => {
    const input: TomlTable = { a: { list: [{ k: 1 }, { k: 2 }], m: { z: 1 }, b: { y: 1 } } };
    expect(encodeToml(input)).toBe(
      doc('[a]', '  [a.b]', '    y = 1', '', '  [[a.list]]', '    k = 1', '', '  [[a.list]]', '    k = 2', '  [a.m]', '    z = 1'),
    );
    // The layout is still valid TOML meaning the same thing.
    expect(parseToml(encodeToml(input))).toEqual(input);
  });

  it('writes tables inside mixed or nested arrays as inline tables', () => {
    const input: TomlTable = { m: [1, { b: 'x', a: 1 }], n: [[{ a: 1 }], []], e: [1, {}] };
    expect(encodeToml(input)).toBe(doc('e = [1, {}]', 'm = [1, { a = 1, b = "x" }]', 'n = [[{ a = 1 }], []]'));
    expect(parseToml(encodeToml(input))).toEqual(input);
  });
});

describe('floats and integers', () => {
  it('keeps floats parsed from TOML text as floats and integers as integers', () => {
    const text = doc('a = 1.0', 'b = 1', 'c = 1e3', 'd = -0.0', 'e = 0.5', 'f = -inf', 'g = nan', 'h = 2.5e-7', 'i = 0x1F');
    const parsed = parseToml(text);
    expect(parsed.a).toBeInstanceOf(TomlFloat);
    expect(Number(parsed.a)).toBe(1);
    expect(parsed.b).toBe(1);
    expect(parsed.i).toBe(31);
    expect(tomlKindOf(parsed.c)).toBe('float');
    expect(isTomlFloat(parsed.e)).toBe(true);
    expect(encodeToml(parsed)).toBe(
      doc('a = 1.0', 'b = 1', 'c = 1000.0', 'd = -0.0', 'e = 0.5', 'f = -inf', 'g = nan', 'h = 0.00000025', 'i = 31'),
    );
  });

  it('keeps floats inside arrays and inline tables', () => {
    const parsed = parseToml('arr = [1.0, 2, 3.5]\nt = { x = 2.0, y = 2 }\n');
    expect(encodeToml(parsed)).toBe(doc('arr = [1.0, 2, 3.5]', '', '[t]', '  x = 2.0', '  y = 2'));
  });

  it('lets YAML-sourced numbers be marked as floats with tomlFloat()', () => {
    expect(encodeToml({ ratio: tomlFloat(1), neg: tomlFloat(-1), frac: 0.25, int: 1 })).toBe(
      doc('frac = 0.25', 'int = 1', 'neg = -1.0', 'ratio = 1.0'),
    );
  });

  it('formats floats like Go strconv FormatFloat(f, "f", -1): no exponent', () => {
    expect(encodeToml({ big: tomlFloat(1e21), tiny: 1e-7, mid: 123.456, nz: -0 / 1, pinf: Infinity })).toBe(
      doc('big = 1000000000000000000000.0', 'mid = 123.456', 'nz = 0', 'pinf = inf', 'tiny = 0.0000001'),
    );
    expect(encodeToml({ nz: tomlFloat(-0) })).toBe('nz = -0.0\n');
  });

  it('round-trips integers beyond 2^53 as bigint', () => {
    const text = doc('max = 9223372036854775807', 'min = -9223372036854775808', 'odd = 9007199254740993');
    const parsed = parseToml(text);
    expect(parsed.odd).toBe(9007199254740993n);
    expect(parsed.max).toBe(9223372036854775807n);
    expect(encodeToml(parsed)).toBe(text);
    expect(encodeToml({ v: 2n ** 62n })).toBe('v = 4611686018427387904\n');
  });

  it('writes integral JS numbers up to 2^63 as integers and larger ones as floats', () => {
    expect(encodeToml({ a: 2 ** 60, b: 2 ** 64 })).toBe(doc('a = 1152921504606846976', 'b = 18446744073709552000.0'));
  });

  it('rejects integers outside 64 bits when parsing and encoding', () => {
    expect(() => parseToml('x = 9223372036854775808\n')).toThrow(TomlSyntaxError);
    expect(() => parseToml('x = 0xFFFFFFFFFFFFFFFF\n')).toThrow(/out of range/);
    expect(() => encodeToml({ a: { x: 2n ** 63n } })).toThrow(/"a\.x".*64 bits/);
  });
});

describe('dates', () => {
  it('round-trips every TOML date-time kind', () => {
    const text = doc(
      'ld = 1979-05-27',
      'ldt = 1979-05-27T07:32:00',
      'lt = 07:32:00',
      'lt2 = 00:32:00.5',
      'odt = 1979-05-27T07:32:00Z',
      'odt2 = 1979-05-27T00:32:00.999-07:00',
    );
    const parsed = parseToml(text);
    expect(parsed.odt).toBeInstanceOf(Date);
    const encoded = encodeToml(parsed);
    expect(encoded).toBe(
      doc(
        'ld = 1979-05-27',
        'ldt = 1979-05-27T07:32:00',
        'lt = 07:32:00',
        'lt2 = 00:32:00.500',
        'odt = 1979-05-27T07:32:00Z',
        'odt2 = 1979-05-27T07:32:00.999Z',
      ),
    );
    const reparsed = parseToml(encoded);
    expect(tomlEqual(reparsed, parsed)).toBe(true);
    expect(encodeToml(reparsed)).toBe(encoded);
  });

  it('parses dates and times inside arrays and inline tables and before another line', () => {
    const parsed = parseToml('a = [1979-05-27, 07:32:00, 1979-05-27T07:32:00+01:30]\nt = { d = 1979-05-27 }\nlt = 07:32:00\nb = 1\n');
    expect(encodeToml(parsed)).toBe(
      doc('a = [1979-05-27, 07:32:00, 1979-05-27T06:02:00Z]', 'b = 1', 'lt = 07:32:00', '', '[t]', '  d = 1979-05-27'),
    );
  });

  it('writes plain Date objects as UTC offset date-times', () => {
    expect(encodeToml({ at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)) })).toBe('at = 2024-01-02T03:04:05Z\n');
    expect(() => encodeToml({ at: new Date(NaN) })).toThrow(TomlEncodeError);
  });
});

describe('parse -> encode -> parse', () => {
  const text = [
    '# TiKV config written by a user, in their own layout',
    'log-level = "info"',
    '[storage]',
    'reserve-space = "0MB"',
    '[storage.block-cache]',
    'capacity = "16GB"',
    '[raftstore]',
    'sync-log = false',
    'ratio = 1.0',
    'apply-pool-size = 4',
    '[server.labels]',
    'zone = "z1"',
    '[[security.encryption.master-keys]]',
    'type = "file"',
    'path = "/a"',
    '[[security.encryption.master-keys]]',
    'type = "kms"',
    '[readpool]',
    'unified = { max-thread-count = 8, min = 0.5 }',
    'odd = 9007199254740993',
    'when = 2020-01-01T00:00:00Z',
    'multi = """',
    'line one',
    'line "two"',
    '"""',
    "literal = 'C:\\path'",
  ].join('\n');

  it('is stable', () => {
    const first = parseToml(text);
    const encoded = encodeToml(first);
    const second = parseToml(encoded);
    expect(second).toEqual(first);
    expect(tomlEqual(second, first)).toBe(true);
    expect(encodeToml(second)).toBe(encoded);
  });

  it('produces plain objects a caller can inspect', () => {
    const parsed = parseToml(text);
    expect(getPath(parsed, ['storage', 'block-cache', 'capacity'])).toBe('16GB');
    expect(getPath(parsed, ['readpool', 'odd'])).toBe(9007199254740993n);
    expect(Object.getPrototypeOf(parsed.storage)).toBe(Object.prototype);
    expect(Object.getOwnPropertySymbols(parsed.storage)).toEqual([]);
  });

  it('keeps a "__proto__" key as an ordinary key', () => {
    const parsed = parseToml('"__proto__" = 1\n[a]\n"__proto__" = { x = 2 }\n');
    expect(Object.keys(parsed)).toEqual(['__proto__', 'a']);
    expect(encodeToml(parsed)).toBe(doc('__proto__ = 1', '', '[a]', '  [a.__proto__]', '    x = 2'));
    const merged = mergeTables({}, parsed);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.keys(merged)).toEqual(['__proto__', 'a']);
  });
});

describe('parse errors', () => {
  it('reports the line and column of a syntax error in plain words', () => {
    let error: unknown;
    try {
      parseToml('a = 1\n[log]\nlevel = \n');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TomlSyntaxError);
    const syntax = error as TomlSyntaxError;
    expect(syntax.line).toBe(3);
    expect(syntax.column).toBeGreaterThan(1);
    expect(syntax.message).toMatch(/^TOML syntax error at line 3, column \d+: /);
    expect(syntax.message).toContain('level = ');
  });

  it('refuses tables, arrays and inline tables nested past 100 levels, at their line, instead of overflowing the stack', () => {
    const header = `x = 1\n[${Array(3000).fill('a').join('.')}]\ny = 2\n`;
    expect(() => parseToml(header)).toThrow(/line 2, column 1: tables and arrays nest more than 100 levels deep/);
    expect(() => parseToml(`a = ${'['.repeat(500)}${']'.repeat(500)}\n`)).toThrow(/more than 100 levels deep/);
    expect(() => parseToml(`a = ${'{b = '.repeat(500)}1${'}'.repeat(500)}\n`)).toThrow(/more than 100 levels deep/);
    expect(parseToml(`[${Array(99).fill('a').join('.')}]\ny = 2\n`)).toBeDefined();
  });

  it('names the offending character instead of its code', () => {
    expect(() => parseToml('a = 1\n= 2\n')).toThrow(/line 2, column 1: unexpected character "="/);
  });

  it('reports duplicate keys', () => {
    expect(() => parseToml('a = 1\na = 2\n')).toThrow(/line 2.*redefine/);
  });

  it.each([
    ['[constructor]\na = 1', 1, 2, 'constructor'],
    ['[log]\nlevel = "info"\n[b.log.constructor]\n[a]\nb = 1', 3, 8, 'constructor'],
    ['toString = 1', 1, 1, 'toString'],
    ['x = { valueOf = 1 }', 1, 7, 'valueOf'],
  ])('refuses %j, whose key every JavaScript object has, at its place, and leaves Object alone', (text, line, column, key) => {
    expect(() => parseToml(text)).toThrow(`line ${line}, column ${column}: the key "${key}" cannot be read`);
    expect(Object.prototype.hasOwnProperty.call(Object, 'a')).toBe(false);
  });

  it('reads such words inside strings and as parts of longer keys', () => {
    expect(parseToml('x = "constructor = 1"\nmy-constructor = 2\n')).toEqual({ x: 'constructor = 1', 'my-constructor': 2 });
    expect(Object.keys(parseToml('[__proto__]\nx = 1\n'))).toEqual(['__proto__']);
  });

  it('parses an empty document to an empty table', () => {
    expect(parseToml('')).toEqual({});
    expect(parseToml('# only a comment\n')).toEqual({});
  });
});

describe('values TOML cannot hold', () => {
  it('names the key path of a null value', () => {
    expect(() => encodeToml({ log: { file: { 'max-backups': null as unknown as number } } })).toThrow(/"log\.file\.max-backups".*null/);
  });

  it('names the key path of undefined values and array elements', () => {
    expect(() => encodeToml({ a: undefined as unknown as number })).toThrow(/"a".*undefined/);
    expect(() => encodeToml({ t: { list: [1, null as unknown as number] } })).toThrow(/"t\.list\[1\]"/);
  });

  it('rejects non-plain objects and functions', () => {
    expect(() => encodeToml({ m: new Map() as unknown as TomlTable })).toThrow(/"m".*Map/);
    expect(() => encodeToml({ f: (() => 1) as unknown as number })).toThrow(TomlEncodeError);
  });
});

describe('mergeTables', () => {
  const base: TomlTable = { a: 1, t: { x: 1, y: { z: 1 } }, arr: [1, 2], s: { deep: 1 } };
  const overlay: TomlTable = { t: { y: { w: 2 }, x: 5 }, arr: [3], b: 'n', a: { now: 'table' }, s: 'scalar' };

  it('overlays recursively; overlay wins; arrays are replaced', () => {
    expect(mergeTables(base, overlay)).toEqual({
      a: { now: 'table' },
      t: { x: 5, y: { z: 1, w: 2 } },
      arr: [3],
      s: 'scalar',
      b: 'n',
    });
  });

  it('does not modify or share its inputs', () => {
    const baseCopy = JSON.parse(JSON.stringify(base));
    const overlayCopy = JSON.parse(JSON.stringify(overlay));
    const merged = mergeTables(base, overlay);
    (merged.t as TomlTable).x = 99;
    ((merged.t as TomlTable).y as TomlTable).z = 99;
    (merged.arr as number[]).push(4);
    expect(base).toEqual(baseCopy);
    expect(overlay).toEqual(overlayCopy);
    const unchanged = mergeTables(base, {});
    expect(unchanged).toEqual(base);
    expect(unchanged.t).not.toBe(base.t);
  });

  it('keeps float markers', () => {
    const merged = mergeTables(parseToml('[gc]\nx = 1\n'), { gc: { 'ratio-threshold': tomlFloat(-1) } });
    expect(encodeToml(merged)).toBe(doc('[gc]', '  ratio-threshold = -1.0', '  x = 1'));
  });
});

describe('key paths', () => {
  const table: TomlTable = { security: { 'ssl-ca': '/old' }, port: 4000 };

  it('sets a path in a copy, creating missing tables', () => {
    const next = setPath(table, ['security', 'ssl-cert'], '/var/lib/tidb-server-tls/tls.crt');
    expect(next).toEqual({ security: { 'ssl-ca': '/old', 'ssl-cert': '/var/lib/tidb-server-tls/tls.crt' }, port: 4000 });
    expect(table).toEqual({ security: { 'ssl-ca': '/old' }, port: 4000 });
    expect(setPath({}, ['a', 'b', 'c'], 1)).toEqual({ a: { b: { c: 1 } } });
    expect(setPath(table, ['security', 'ssl-ca'], '/new').security).toEqual({ 'ssl-ca': '/new' });
  });

  it('refuses to set a path through a non-table value', () => {
    expect(() => setPath(table, ['port', 'x'], 1)).toThrow(/"port\.x".*"port" already holds a value of type integer, not a table/);
    expect(() => setPath(table, [], 1)).toThrow();
  });

  it('gets, tests and deletes paths', () => {
    expect(getPath(table, ['security', 'ssl-ca'])).toBe('/old');
    expect(getPath(table, ['security', 'nope'])).toBeUndefined();
    expect(getPath(table, ['port', 'x'])).toBeUndefined();
    expect(getPath(table, ['toString'])).toBeUndefined();
    expect(hasPath(table, ['security'])).toBe(true);
    expect(hasPath(table, ['security', 'ssl-key'])).toBe(false);
    expect(deletePath(table, ['security', 'ssl-ca'])).toEqual({ security: {}, port: 4000 });
    expect(deletePath(table, ['missing', 'x'])).toEqual(table);
    expect(table.security).toEqual({ 'ssl-ca': '/old' });
  });
});

describe('tomlEqual', () => {
  it('compares semantically: key order ignored, int and float differ', () => {
    expect(tomlEqual({ a: 1, b: { c: [1, 'x'] } }, { b: { c: [1, 'x'] }, a: 1 })).toBe(true);
    expect(tomlEqual({ a: 1 }, { a: tomlFloat(1) })).toBe(false);
    expect(tomlEqual({ a: 0.5 }, { a: tomlFloat(0.5) })).toBe(true);
    expect(tomlEqual({ a: 5n }, { a: 5 })).toBe(true);
    expect(tomlEqual({ a: [1] }, { a: [1, 2] })).toBe(false);
    expect(tomlEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(tomlEqual({ a: '1' }, { a: 1 })).toBe(false);
  });
});
