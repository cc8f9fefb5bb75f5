import { createHash } from 'node:crypto';
import { configMapHash, goJsonStringMap } from '../../../../src/render/config/hash';

describe('goJsonStringMap', () => {
  const goVector = {
    'startup-script': 'echo "x" >&2 && true\n',
    'config-file': 'lease = "45s"\n',
  };

  it('matches the Go encoding/json output of the reference vector exactly', () => {
    expect(goJsonStringMap(goVector)).toBe(
      '{"config-file":"lease = \\"45s\\"\\n","startup-script":"echo \\"x\\" \\u003e\\u00262 \\u0026\\u0026 true\\n"}',
    );
  });

  it('escapes < > & like Go HTML-safe encoding', () => {
    expect(goJsonStringMap({ a: '<b>&</b>' })).toBe('{"a":"\\u003cb\\u003e\\u0026\\u003c/b\\u003e"}');
  });

  it('escapes U+2028 and U+2029 (JSON.stringify leaves them raw)', () => {
    expect(goJsonStringMap({ a: 'x\u2028y\u2029z' })).toBe('{"a":"x\\u2028y\\u2029z"}');
  });

  it('escapes characters in keys too', () => {
    expect(goJsonStringMap({ '<k>': 'v' })).toBe('{"\\u003ck\\u003e":"v"}');
  });

  it('writes \\b and \\f as short escapes and other control characters as lowercase \\u00xx', () => {
    expect(goJsonStringMap({ a: '\b\f\t\r\n\u0001\u001f' })).toBe('{"a":"\\b\\f\\t\\r\\n\\u0001\\u001f"}');
  });

  it('does not escape DEL or non-ASCII text', () => {
    expect(goJsonStringMap({ a: '\u007fé€😀' })).toBe('{"a":"\u007fé€😀"}');
  });

  it('replaces lone surrogates with U+FFFD (what a UTF-8 manifest would contain)', () => {
    expect(goJsonStringMap({ a: 'x\ud800y', b: '\udc00' })).toBe('{"a":"x\ufffdy","b":"\ufffd"}');
  });

  it('sorts keys by UTF-8 bytes like Go, not by UTF-16 code units', () => {
    // In UTF-16 the emoji starts with 0xD83D < 0xFF61, so JavaScript's default sort puts it first;
    const data = { '\u{1F600}': '1', '\uFF61': '2', b: '3', a: '4' };
    // UTF-8: "a" < "b" < EF BD A1 (U+FF61) < F0 9F 98 80 (U+1F600)
    expect(goJsonStringMap(data)).toBe('{"a":"4","b":"3","\uFF61":"2","\u{1F600}":"1"}');
  });

  it('is compact and gives {} for an empty map', () => {
    expect(goJsonStringMap({})).toBe('{}');
    expect(goJsonStringMap({ k: 'v', j: '' })).toBe('{"j":"","k":"v"}');
  });

  it('rejects non-string values', () => {
    expect(() => goJsonStringMap({ a: 1 as unknown as string })).toThrow(/must be a string/);
  });
});

describe('configMapHash', () => {
  it('gives the suffix verified with Go for the reference vector', () => {
    const data = { 'startup-script': 'echo "x" >&2 && true\n', 'config-file': 'lease = "45s"\n' };
    const full = createHash('sha256').update(goJsonStringMap(data)).digest('hex');
    expect(full.startsWith('4f7dce1d')).toBe(true);
    expect(configMapHash(data)).toBe('4f7dce1');
  });

  it('is 7 lowercase hex characters and independent of key insertion order', () => {
    const a = configMapHash({ x: '1', y: '2' });
    expect(a).toMatch(/^[0-9a-f]{7}$/);
    expect(configMapHash({ y: '2', x: '1' })).toBe(a);
    expect(configMapHash({ x: '1', y: '3' })).not.toBe(a);
  });
});
