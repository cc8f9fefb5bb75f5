/**
 * Go's encodings, as PD puts them on the wire, for the PD simulator: JSON (with exact 64-bit
 * integers), the text of `time.Duration`, `typeutil.ByteSize` and `time.Time`, and the errors of
 * `strconv.ParseUint` / `strconv.Atoi` / `encoding/json` that PD copies into its answers.
 *
 * Values for `goJson`: `bigint` is an integer written exactly (uint64 ids, int64 nanoseconds);
 * `number` a Go int or float64; `undefined` object members are left out (Go's `omitempty`), and
 * `GoMap` is a Go map, whose keys encoding/json sorts. Plain objects keep their insertion order,
 * which stands for the order of a Go struct's fields.
 */

/** A Go map: encoding/json writes its entries sorted by key (golang/go src/encoding/json/encode.go `mapEncoder`). */
export class GoMap {
  constructor(readonly entries: readonly (readonly [string, unknown])[]) {}
}

/**
 * `json.Marshal(v)`, or `json.MarshalIndent(v, "", indent)` when `indent` is given
 * (golang/go src/encoding/json/encode.go, indent.go; Go 1.22+ escapes: `\b`, `\f`, and `<`, `>`, `&`
 * as `\u003c`... since HTML escaping is on).
 */
export function goJson(v: unknown, indent?: string): string {
  return encode(v, indent === undefined ? '' : '\n', indent);
}

/**
 * The body `h.rd.JSON(w, status, v)` writes in PD: unrolled/render v1.0.1 `JSON.Render` with
 * `IndentJSON: true` (tikv/pd server/api/router.go `createIndentRender`) is MarshalIndent plus "\n".
 */
export function renderJson(v: unknown): string {
  return `${goJson(v, '  ')}\n`;
}

/** unrolled/render v1.0.1 render.go: `ContentJSON + "; charset=" + defaultCharset`. */
export const RENDER_JSON_TYPE = 'application/json; charset=UTF-8';
/** golang/go src/net/http/server.go `Error` (and `NotFound`): this type, `X-Content-Type-Options: nosniff`, text + "\n". */
export const HTTP_ERROR_TYPE = 'text/plain; charset=utf-8';
/** gin-gonic/gin v1.11.0 render/json.go `jsonContentType`. */
export const GIN_JSON_TYPE = 'application/json; charset=utf-8';
/** gin-gonic/gin v1.11.0 gin.go `serveError`: `mimePlain` = `MIMEPlain` = "text/plain". */
export const GIN_PLAIN_TYPE = 'text/plain';

function encode(v: unknown, nl: string, indent: string | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`json: unsupported value: ${v}`);
    // strconv.AppendFloat(f, 'f' or 'e', -1, 64): the shortest text, exponent below 1e-6 and from
    // 1e21 on (encode.go floatEncoder), the same thresholds and digits as JavaScript's.
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return goJsonString(v);
  const inner = indent === undefined ? '' : nl + indent;
  const sep = indent === undefined ? ':' : ': ';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[${v.map((x) => inner + encode(x, inner, indent)).join(',')}${nl}]`;
  }
  const entries =
    v instanceof GoMap
      ? [...v.entries].sort(([a], [b]) => compareBytes(a, b))
      : Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  if (entries.length === 0) return '{}';
  return `{${entries.map(([k, x]) => `${inner}${goJsonString(k)}${sep}${encode(x, inner, indent)}`).join(',')}${nl}}`;
}

function compareBytes(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}

/** encoding/json `appendString` with escapeHTML (encode.go). */
export function goJsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c >= 0xd800 && c <= 0xdfff)
      out += '\\ufffd'; // a lone surrogate is invalid UTF-8 in Go
    else if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c < 0x20 || c === 0x3c || c === 0x3e || c === 0x26 || c === 0x2028 || c === 0x2029)
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** `strconv.Quote` for the texts PD quotes in its errors (golang/go src/strconv/quote.go). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x07) out += '\\a';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0b) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

const UINT64_MAX = (1n << 64n) - 1n;

/**
 * `strconv.ParseUint(s, 10, 64)`: digits only (no sign, no underscores in base 10), at most 2^64-1;
 * otherwise the error text Go gives (`strconv.ParseUint: parsing "abc": invalid syntax`).
 */
export function parseUint64(s: string): { value: bigint } | { error: string } {
  if (!/^[0-9]+$/.test(s)) return { error: `strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax` };
  const value = BigInt(s);
  if (value > UINT64_MAX) return { error: `strconv.ParseUint: parsing ${goQuote(s)}: value out of range` };
  return { value };
}

/** `strconv.Atoi(s)` on 64-bit Go: an optional sign, then decimal digits (golang/go src/strconv/atoi.go). */
export function atoi(s: string): { value: number } | { error: string } {
  if (!/^[+-]?[0-9]+$/.test(s)) return { error: `strconv.Atoi: parsing ${goQuote(s)}: invalid syntax` };
  const value = BigInt(s);
  if (value > (1n << 63n) - 1n || value < -(1n << 63n)) return { error: `strconv.Atoi: parsing ${goQuote(s)}: value out of range` };
  return { value: Number(value) };
}

/** `time.Duration.String()` of `ns` nanoseconds: "1h2m3.5s", "1m0s", "250ms", "0s" (golang/go src/time/time.go). */
export function goDuration(ns: number): string {
  if (!Number.isInteger(ns)) ns = Math.round(ns);
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  const u = Math.abs(ns);
  if (u < 1e9) {
    if (u < 1e3) return `${sign}${u}ns`;
    if (u < 1e6) return `${sign}${fraction(u, 3)}µs`;
    return `${sign}${fraction(u, 6)}ms`;
  }
  const seconds = `${fraction(u % 60e9, 9)}s`;
  const totalMinutes = Math.floor(u / 60e9);
  if (totalMinutes === 0) return sign + seconds;
  const minutes = `${totalMinutes % 60}m${seconds}`;
  const hours = Math.floor(totalMinutes / 60);
  return sign + (hours === 0 ? minutes : `${hours}h${minutes}`);
}

/** `v / 10^prec` with the fraction's trailing zeros (and then the dot) left out. */
function fraction(v: number, prec: number): string {
  const scale = 10 ** prec;
  const whole = Math.floor(v / scale);
  const frac = String(v % scale)
    .padStart(prec, '0')
    .replace(/0+$/, '');
  return frac === '' ? String(whole) : `${whole}.${frac}`;
}

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'];

/**
 * docker/go-units `BytesSize`: `CustomSize("%.4g%s", size, 1024, binaryAbbrs)`, as
 * `typeutil.ByteSize.MarshalJSON` (tikv/pd pkg/utils/typeutil/size.go) writes capacities: "100GiB", "0B".
 */
export function bytesSize(bytes: number): string {
  let size = bytes;
  let i = 0;
  while (size >= 1024 && i < BINARY_UNITS.length - 1) {
    size /= 1024;
    i++;
  }
  return `${formatG4(size)}${BINARY_UNITS[i]}`;
}

/** `%.4g` for 0 <= x < 1024 (no exponent in that range): 4 significant digits, trailing zeros dropped. */
function formatG4(x: number): string {
  if (x === 0) return '0';
  const text = x.toPrecision(4);
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/**
 * `time.Time.MarshalJSON` (RFC 3339 with nanoseconds, trailing zeros of the fraction left out) for a
 * time in UTC, the zone of a pod without TZ: `epochMs` plus `extraNs` (0-999999) nanoseconds.
 */
export function rfc3339Nano(epochMs: number, extraNs = 0): string {
  const d = new Date(Math.floor(epochMs));
  const iso = d.toISOString(); // 2024-01-02T03:04:05.678Z
  const ns = (Math.floor(epochMs) % 1000) * 1e6 + extraNs;
  const frac = String(ns).padStart(9, '0').replace(/0+$/, '');
  return `${iso.slice(0, 19)}${frac === '' ? '' : `.${frac}`}Z`;
}

// ---- encoding/json syntax errors ----

/** What `json.Unmarshal` found wrong with a body: the text of its error and the error value's `Offset`. */
export interface JsonSyntaxError {
  message: string;
  offset: number;
}

/**
 * Checks `text` as encoding/json's scanner does (golang/go src/encoding/json/scanner.go `checkValid`,
 * a transcription of its states): the first error with Go's message ("invalid character 'x' looking
 * for beginning of value", "unexpected end of JSON input") and the bytes read when it was found.
 */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const bytes = Buffer.from(text, 'utf8');
  const scan = new GoScanner();
  for (let i = 0; i < bytes.length; i++) {
    const message = scan.step(bytes[i]);
    if (message !== undefined) return { message, offset: i + 1 };
  }
  // scanner.eof(): a space ends a number; anything but a complete top-level value is cut short.
  if (!scan.endTop) scan.step(0x20);
  return scan.endTop ? undefined : { message: 'unexpected end of JSON input', offset: bytes.length };
}

type ParseState = 'objectKey' | 'objectValue' | 'arrayValue';
type State = (c: number) => string | undefined;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** encoding/json scanner.go: one method per `stateXxx` function; each returns an error text or undefined. */
class GoScanner {
  endTop = false;
  step: State = (c) => this.beginValue(c);
  private readonly parseState: ParseState[] = [];

  private error(c: number, context: string): string {
    this.step = () => undefined;
    return `invalid character ${quoteChar(c)} ${context}`;
  }

  private to(state: State): undefined {
    this.step = state;
    return undefined;
  }

  private push(state: ParseState): void {
    this.parseState.push(state);
  }

  private pop(): undefined {
    this.parseState.pop();
    if (this.parseState.length === 0) {
      this.step = (c) => this.endTopState(c);
      this.endTop = true;
    } else {
      this.step = (c) => this.endValue(c);
    }
    return undefined;
  }

  private beginValueOrEmpty(c: number): string | undefined {
    if (isSpace(c)) return undefined;
    if (c === 0x5d) return this.endValue(c);
    return this.beginValue(c);
  }

  private beginValue(c: number): string | undefined {
    if (isSpace(c)) return undefined;
    switch (c) {
      case 0x7b:
        this.push('objectKey');
        return this.to((x) => this.beginStringOrEmpty(x));
      case 0x5b:
        this.push('arrayValue');
        return this.to((x) => this.beginValueOrEmpty(x));
      case 0x22:
        return this.to((x) => this.inString(x));
      case 0x2d:
        return this.to((x) => this.neg(x));
      case 0x30:
        return this.to((x) => this.state0(x));
      case 0x74:
        return this.to(this.literal('rue', 'true'));
      case 0x66:
        return this.to(this.literal('alse', 'false'));
      case 0x6e:
        return this.to(this.literal('ull', 'null'));
    }
    if (c >= 0x31 && c <= 0x39) return this.to((x) => this.state1(x));
    return this.error(c, 'looking for beginning of value');
  }

  private beginStringOrEmpty(c: number): string | undefined {
    if (isSpace(c)) return undefined;
    if (c === 0x7d) {
      this.parseState[this.parseState.length - 1] = 'objectValue';
      return this.endValue(c);
    }
    return this.beginString(c);
  }

  private beginString(c: number): string | undefined {
    if (isSpace(c)) return undefined;
    if (c === 0x22) return this.to((x) => this.inString(x));
    return this.error(c, 'looking for beginning of object key string');
  }

  private endValue(c: number): string | undefined {
    const n = this.parseState.length;
    if (n === 0) {
      this.step = (x) => this.endTopState(x);
      this.endTop = true;
      return this.endTopState(c);
    }
    if (isSpace(c)) return this.to((x) => this.endValue(x));
    switch (this.parseState[n - 1]) {
      case 'objectKey':
        if (c === 0x3a) {
          this.parseState[n - 1] = 'objectValue';
          return this.to((x) => this.beginValue(x));
        }
        return this.error(c, 'after object key');
      case 'objectValue':
        if (c === 0x2c) {
          this.parseState[n - 1] = 'objectKey';
          return this.to((x) => this.beginString(x));
        }
        if (c === 0x7d) return this.pop();
        return this.error(c, 'after object key:value pair');
      case 'arrayValue':
        if (c === 0x2c) return this.to((x) => this.beginValue(x));
        if (c === 0x5d) return this.pop();
        return this.error(c, 'after array element');
    }
  }

  private endTopState(c: number): string | undefined {
    return isSpace(c) ? undefined : this.error(c, 'after top-level value');
  }

  private inString(c: number): string | undefined {
    if (c === 0x22) return this.to((x) => this.endValue(x));
    if (c === 0x5c) return this.to((x) => this.inStringEsc(x));
    if (c < 0x20) return this.error(c, 'in string literal');
    return undefined;
  }

  private inStringEsc(c: number): string | undefined {
    if ([0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(c)) return this.to((x) => this.inString(x));
    if (c === 0x75) return this.to(this.escU(4));
    return this.error(c, 'in string escape code');
  }

  private escU(left: number): State {
    return (c) => {
      if (!isHex(c)) return this.error(c, 'in \\u hexadecimal character escape');
      return this.to(left === 1 ? (x) => this.inString(x) : this.escU(left - 1));
    };
  }

  private neg(c: number): string | undefined {
    if (c === 0x30) return this.to((x) => this.state0(x));
    if (c >= 0x31 && c <= 0x39) return this.to((x) => this.state1(x));
    return this.error(c, 'in numeric literal');
  }

  private state1(c: number): string | undefined {
    return isDigit(c) ? undefined : this.state0(c);
  }

  private state0(c: number): string | undefined {
    if (c === 0x2e) return this.to((x) => this.dot(x));
    if (c === 0x65 || c === 0x45) return this.to((x) => this.e(x));
    return this.endValue(c);
  }

  private dot(c: number): string | undefined {
    if (isDigit(c)) return this.to((x) => this.dot0(x));
    return this.error(c, 'after decimal point in numeric literal');
  }

  private dot0(c: number): string | undefined {
    if (isDigit(c)) return undefined;
    if (c === 0x65 || c === 0x45) return this.to((x) => this.e(x));
    return this.endValue(c);
  }

  private e(c: number): string | undefined {
    if (c === 0x2b || c === 0x2d) return this.to((x) => this.eSign(x));
    return this.eSign(c);
  }

  private eSign(c: number): string | undefined {
    if (isDigit(c)) return this.to((x) => this.e0(x));
    return this.error(c, 'in exponent of numeric literal');
  }

  private e0(c: number): string | undefined {
    return isDigit(c) ? undefined : this.endValue(c);
  }

  /** stateT/stateTr/stateTru, stateF..., stateN...: the rest of a literal, one byte at a time. */
  private literal(rest: string, name: string, at = 0): State {
    return (c) => {
      const want = rest.charCodeAt(at);
      if (c !== want) return this.error(c, `in literal ${name} (expecting ${quoteChar(want)})`);
      return this.to(at + 1 === rest.length ? (x) => this.endValue(x) : this.literal(rest, name, at + 1));
    };
  }
}

/** encoding/json scanner.go `quoteChar`. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const q = goQuote(String.fromCharCode(c));
  return `'${q.slice(1, -1)}'`;
}
