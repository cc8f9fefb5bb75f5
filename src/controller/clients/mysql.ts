/**
 * A small client of the MySQL client/server protocol, for the few statements the controller runs
 * on TiDB's MySQL port as root: setting root's password, creating users, running init SQL.
 *
 * Supports: the handshake (protocol 10) with `mysql_native_password` and `caching_sha2_password`
 * (TiDB's two password plugins, pingcap/tidb `pkg/server/conn.go`; MariaDB speaks the first),
 * including the server's AuthSwitchRequest and caching_sha2's full authentication (the password
 * over TLS, otherwise RSA-encrypted with the server's public key, which TiDB does not offer: it
 * needs TLS for that); an optional TLS upgrade after the SSL request; text queries (COM_QUERY)
 * answered by OK, ERR or a result set, one at a time, each bounded in time.
 * Not supported: prepared statements, multi-statements, several result sets, compression, a
 * default database, LOCAL INFILE. A password never appears in an error.
 */
import { constants, createHash, publicEncrypt } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export interface MysqlOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** TLS after the handshake's SSL request; the CA is verified when given, the host name is not (as the mysql client's VERIFY_CA). @default plain TCP */
  readonly tls?: { readonly ca?: string | Buffer; readonly cert?: string | Buffer; readonly key?: string | Buffer };
  /** Bound on connecting and on each query, ms. @default 10000 */
  readonly timeoutMs?: number;
}

/** An error the server answered (its error number and SQL state), or code 0 for the network or the protocol. */
export class MysqlError extends Error {
  constructor(
    message: string,
    /** The server's error number (1045: access denied), or 0 for the network, a timeout or the protocol. */
    readonly code: number,
    readonly sqlState: string,
  ) {
    super(message);
    this.name = 'MysqlError';
  }
}

export interface QueryResult {
  readonly columns: readonly string[];
  readonly rows: readonly (string | null)[][];
  /** From the OK packet; 0 for a result set. */
  readonly affectedRows: number;
}

export interface MysqlConnection {
  /** As the server says it (`8.0.11-TiDB-v8.5.0`); MariaDB's `5.5.5-` prefix for old clients is dropped, as its own clients do. */
  readonly serverVersion: string;
  query(sql: string): Promise<QueryResult>;
  close(): Promise<void>;
}

export const ER_ACCESS_DENIED = 1045;

const CLIENT_LONG_PASSWORD = 0x1;
const CLIENT_PROTOCOL_41 = 0x200;
const CLIENT_SSL = 0x800;
const CLIENT_TRANSACTIONS = 0x2000;
const CLIENT_SECURE_CONNECTION = 0x8000;
const CLIENT_PLUGIN_AUTH = 0x80000;
const UTF8MB4_GENERAL_CI = 45;
const MAX_PACKET = 0xffffff;
const COM_QUIT = 0x01;
const COM_QUERY = 0x03;
const NATIVE = 'mysql_native_password';
const SHA2 = 'caching_sha2_password';

const digest = (alg: 'sha1' | 'sha256', ...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash(alg)).digest();

function xor(a: Buffer, b: Buffer): Buffer {
  return Buffer.from(a.map((v, i) => v ^ b[i % b.length]));
}

/** `mysql_native_password`: SHA1(password) XOR SHA1(scramble || SHA1(SHA1(password))); empty for no password. */
export function nativeScramble(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const p1 = digest('sha1', Buffer.from(password, 'utf8'));
  return xor(p1, digest('sha1', scramble.subarray(0, 20), digest('sha1', p1)));
}

/** `caching_sha2_password`'s fast path: SHA256(password) XOR SHA256(SHA256(SHA256(password)) || scramble); empty for no password. */
export function sha2Scramble(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const p1 = digest('sha256', Buffer.from(password, 'utf8'));
  return xor(p1, digest('sha256', digest('sha256', p1), scramble.subarray(0, 20)));
}

const ESCAPES: Record<string, string> = {
  '\0': '\\0',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\x1a': '\\Z',
  '\\': '\\\\',
  "'": "''",
};

/** A string literal for SQL: quotes doubled, backslashes and control characters escaped as the server reads them with its default sql_mode; with noBackslashEscapes only quotes are doubled. */
export function sqlString(value: string, noBackslashEscapes = false): string {
  return `'${noBackslashEscapes ? value.replace(/'/g, "''") : value.replace(/[\0\b\t\n\r\x1a\\']/g, (c) => ESCAPES[c])}'`;
}

/** Whole packets from the byte stream: 3-byte length, sequence id (checked), payload; 16 MiB parts joined. */
class PacketReader {
  /** The sequence id of the next packet, either way; 0 at each command. */
  sequence = 0;
  failed?: MysqlError;
  private chunks: Buffer[] = [];
  private size = 0;
  private parts: Buffer[] = [];
  private readonly ready: Buffer[] = [];
  private waiting?: { resolve: (p: Buffer) => void; reject: (e: Error) => void };

  constructor(private readonly where: string) {}

  feed(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.drain();
  }

  fail(err: MysqlError): void {
    this.failed ??= err;
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(this.failed);
  }

  next(): Promise<Buffer> {
    if (this.ready.length > 0) return Promise.resolve(this.ready.shift()!);
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  /** The buffered bytes as one buffer; joined only when a whole packet is there, so long packets are copied once. */
  private head(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  private drain(): void {
    while (!this.failed && this.size >= 4) {
      let b = this.chunks[0].length >= 4 ? this.chunks[0] : this.head();
      const length = b.readUIntLE(0, 3);
      if (this.size < 4 + length) return;
      if (b.length < 4 + length) b = this.head();
      if (b[3] !== this.sequence)
        return this.fail(new MysqlError(`${this.where}: packet ${b[3]} came where ${this.sequence} was expected`, 0, 'HY000'));
      this.sequence = (this.sequence + 1) & 0xff;
      this.parts.push(b.subarray(4, 4 + length));
      this.size -= 4 + length;
      if (b.length === 4 + length) this.chunks.shift();
      else this.chunks[0] = b.subarray(4 + length);
      if (length === MAX_PACKET) continue;
      this.ready.push(this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts));
      this.parts = [];
      const w = this.waiting;
      if (w) {
        this.waiting = undefined;
        w.resolve(this.ready.shift()!);
      }
    }
  }
}

/** Reads a packet's fields in order. */
class Cursor {
  constructor(
    readonly b: Buffer,
    public at = 0,
  ) {}

  int(n: number): number {
    const v = this.b.readUIntLE(this.at, n);
    this.at += n;
    return v;
  }

  /** A length-encoded integer; null for 0xFB (NULL in a row). */
  lenenc(): number | null {
    const first = this.int(1);
    if (first < 0xfb) return first;
    if (first === 0xfb) return null;
    if (first !== 0xfe) return this.int(first === 0xfc ? 2 : 3);
    const v = Number(this.b.readBigUInt64LE(this.at));
    this.at += 8;
    return v;
  }

  lenencString(): string | null {
    const n = this.lenenc();
    return n === null ? null : this.bytes(n).toString('utf8');
  }

  nulString(): string {
    const end = this.b.indexOf(0, this.at);
    return this.bytes((end < 0 ? this.b.length : end) - this.at, 1).toString('utf8');
  }

  /** `n` bytes after `before` skipped, then `after` skipped (a NUL, a filler). */
  bytes(n: number, after = 0, before = 0): Buffer {
    this.at += before;
    const v = this.b.subarray(this.at, this.at + n);
    this.at += n + after;
    return v;
  }
}

export async function connectMysql(o: MysqlOptions): Promise<MysqlConnection> {
  const c = new Connection(o);
  try {
    await c.bounded('the handshake', () => c.handshake());
  } catch (err) {
    c.destroy();
    throw err;
  }
  return c;
}

class Connection implements MysqlConnection {
  serverVersion = '';
  private readonly where: string;
  private readonly timeoutMs: number;
  private readonly reader: PacketReader;
  private socket: Socket;
  private busy = false;

  constructor(private readonly o: MysqlOptions) {
    this.where = `${o.host}:${o.port}`;
    this.timeoutMs = o.timeoutMs ?? 10_000;
    this.reader = new PacketReader(this.where);
    this.socket = this.wire(netConnect({ host: o.host, port: o.port }));
  }

  async query(sql: string): Promise<QueryResult> {
    if (this.busy) throw this.error('a query is already running on this connection');
    if (this.reader.failed) throw this.reader.failed;
    this.busy = true;
    try {
      return await this.bounded('a query', () => {
        this.reader.sequence = 0;
        this.write(Buffer.concat([Buffer.from([COM_QUERY]), Buffer.from(sql, 'utf8')]));
        return this.result();
      });
    } finally {
      this.busy = false;
    }
  }

  async close(): Promise<void> {
    if (this.socket.destroyed) return;
    if (!this.reader.failed && !this.busy) {
      this.reader.sequence = 0;
      this.write(Buffer.from([COM_QUIT]));
    }
    this.reader.fail(this.error('the connection is closed'));
    await new Promise<void>((resolve) => this.socket.end(resolve));
    this.destroy();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** `work`, or a rejection with code 0 and the connection destroyed after timeoutMs. */
  async bounded<T>(what: string, work: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = this.error(`no answer to ${what} within ${this.timeoutMs} ms`);
        this.reader.fail(err);
        this.destroy();
        reject(err);
      }, this.timeoutMs);
    });
    try {
      return await Promise.race([work(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async handshake(): Promise<void> {
    const hello = await this.reader.next();
    if (hello[0] === 0xff) throw this.serverError(hello);
    if (hello[0] !== 10) throw this.error(`not a MySQL server (protocol ${hello[0]})`);
    const c = new Cursor(hello, 1);
    this.serverVersion = c.nulString().replace(/^5\.5\.5-(?=.*MariaDB)/, '');
    c.int(4); // connection id
    const part1 = c.bytes(8, 1);
    let caps = c.int(2);
    let scramble = part1;
    let plugin = NATIVE;
    if (c.at < hello.length) {
      c.at += 3; // character set, status flags
      caps |= c.int(2) << 16;
      const authLength = c.int(1);
      c.at += 10;
      if (caps & CLIENT_SECURE_CONNECTION) scramble = Buffer.concat([part1, c.bytes(Math.max(13, authLength - 8) - 1, 1)]);
      if (caps & CLIENT_PLUGIN_AUTH) plugin = c.nulString() || NATIVE;
    }
    if (!(caps & CLIENT_PROTOCOL_41)) throw this.error('the server does not speak protocol 4.1');
    // A plugin we do not know as the server's default: answer as native; the server switches if the user needs another.
    if (plugin !== SHA2) plugin = NATIVE;
    let flags = CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
    const head = Buffer.alloc(32);
    head.writeUInt32LE(MAX_PACKET, 4);
    head[8] = UTF8MB4_GENERAL_CI;
    if (this.o.tls) {
      if (!(caps & CLIENT_SSL)) throw this.error('the server does not offer TLS');
      flags |= CLIENT_SSL;
      head.writeUInt32LE(flags >>> 0, 0);
      this.write(head); // the SSL request: the response's first 32 bytes
      await this.upgrade(this.o.tls);
    }
    head.writeUInt32LE(flags >>> 0, 0);
    const auth = this.authResponse(plugin, scramble);
    this.write(
      Buffer.concat([
        head,
        Buffer.from(`${this.o.user}\0`, 'utf8'),
        Buffer.from([auth.length]),
        auth,
        Buffer.from(`${plugin}\0`, 'latin1'),
      ]),
    );
    await this.authenticate(plugin, scramble);
  }

  private authResponse(plugin: string, scramble: Buffer): Buffer {
    if (plugin === NATIVE) return nativeScramble(this.o.password, scramble);
    if (plugin === SHA2) return sha2Scramble(this.o.password, scramble);
    throw this.error(
      `the server asks for the authentication plugin ${plugin}, which this client does not speak (it speaks ${NATIVE} and ${SHA2})`,
    );
  }

  private async authenticate(firstPlugin: string, firstScramble: Buffer): Promise<void> {
    let plugin = firstPlugin;
    let scramble = firstScramble;
    for (;;) {
      const p = await this.reader.next();
      if (p[0] === 0x00) return;
      if (p[0] === 0xff) throw this.serverError(p);
      if (p[0] === 0xfe) {
        // AuthSwitchRequest: a plugin name and a new scramble (NUL-terminated).
        const c = new Cursor(p, 1);
        plugin = c.nulString();
        scramble = c.bytes(p.length - c.at);
        if (scramble[scramble.length - 1] === 0) scramble = scramble.subarray(0, -1);
        this.write(this.authResponse(plugin, scramble));
      } else if (p[0] === 0x01 && plugin === SHA2 && p[1] === 0x03) {
        // Fast authentication succeeded; the OK follows.
      } else if (p[0] === 0x01 && plugin === SHA2 && p[1] === 0x04) {
        // Full authentication: the password itself, in the clear over TLS, otherwise encrypted with the server's key.
        const secret = Buffer.from(`${this.o.password}\0`, 'utf8');
        if (this.o.tls) {
          this.write(secret);
          continue;
        }
        this.write(Buffer.from([0x02]));
        const key = await this.reader.next();
        if (key[0] === 0xff) throw this.serverError(key);
        if (key[0] !== 0x01)
          throw this.error('no public key from the server for caching_sha2_password (TiDB offers none: connect with TLS)');
        const pem = key.subarray(1).toString('latin1');
        this.write(publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_OAEP_PADDING }, xor(secret, scramble)));
      } else {
        throw this.error(`unexpected packet 0x${p[0].toString(16)} while logging in with ${plugin}`);
      }
    }
  }

  private upgrade(tls: NonNullable<MysqlOptions['tls']>): Promise<void> {
    this.socket.removeAllListeners('data');
    const secure = tlsConnect({
      socket: this.socket,
      ...(tls.ca !== undefined ? { ca: tls.ca } : { rejectUnauthorized: false }),
      ...(tls.cert !== undefined && { cert: tls.cert }),
      ...(tls.key !== undefined && { key: tls.key }),
      // The CA is checked, the name is not: servers are reached by addresses their certificates need not carry.
      checkServerIdentity: () => undefined,
    });
    return new Promise((resolve, reject) => {
      secure.once('secureConnect', () => resolve());
      secure.once('error', (err) => reject(this.error(`TLS: ${err.message}`)));
      this.socket = this.wire(secure);
    });
  }

  private async result(): Promise<QueryResult> {
    const first = await this.reader.next();
    if (first[0] === 0xff) throw this.serverError(first);
    if (first[0] === 0x00) return { columns: [], rows: [], affectedRows: new Cursor(first, 1).lenenc() ?? 0 };
    if (first[0] === 0xfb) throw this.error('the server asks for a local file, which this client does not send');
    const count = new Cursor(first).lenenc() ?? 0;
    const columns: string[] = [];
    for (let i = 0; i < count; i++) {
      const def = new Cursor(await this.reader.next());
      for (let k = 0; k < 4; k++) def.lenencString(); // catalog, schema, table, org_table
      columns.push(def.lenencString() ?? '');
    }
    // Without CLIENT_DEPRECATE_EOF, an EOF packet closes the definitions and another the rows.
    if ((await this.reader.next())[0] !== 0xfe) throw this.error('no EOF packet after the column definitions');
    const rows: (string | null)[][] = [];
    for (;;) {
      const p = await this.reader.next();
      if (p[0] === 0xfe && p.length < 9) return { columns, rows, affectedRows: 0 };
      if (p[0] === 0xff) throw this.serverError(p);
      const c = new Cursor(p);
      rows.push(columns.map(() => c.lenencString()));
    }
  }

  private write(payload: Buffer): void {
    for (let at = 0; ; at += MAX_PACKET) {
      const part = payload.subarray(at, at + MAX_PACKET);
      const header = Buffer.from([part.length & 0xff, (part.length >> 8) & 0xff, part.length >> 16, this.reader.sequence]);
      this.reader.sequence = (this.reader.sequence + 1) & 0xff;
      this.socket.write(Buffer.concat([header, part]));
      if (part.length < MAX_PACKET) return;
    }
  }

  private wire(s: Socket): Socket {
    s.on('data', (chunk: Buffer) => this.reader.feed(chunk));
    s.on('error', (err) => this.reader.fail(this.error(err.message)));
    s.on('close', () => this.reader.fail(this.error('the server closed the connection')));
    return s;
  }

  private error(message: string): MysqlError {
    return new MysqlError(`${this.where}: ${message}`, 0, 'HY000');
  }

  /** An ERR packet: error number, `#` and SQL state (absent before the handshake), message; the password cut out should the server quote it. */
  private serverError(p: Buffer): MysqlError {
    const c = new Cursor(p, 1);
    const code = c.int(2);
    let sqlState = 'HY000';
    if (p[c.at] === 0x23) sqlState = c.bytes(5, 0, 1).toString('latin1');
    let message = p.toString('utf8', c.at);
    for (const secret of new Set([this.o.password, sqlString(this.o.password).slice(1, -1)])) {
      if (secret !== '') message = message.split(secret).join('<password>');
    }
    return new MysqlError(message, code, sqlState);
  }
}
