/**
 * The server side of the MySQL client/server protocol, as much of it as the controller's client
 * (src/controller/clients/mysql.ts) speaks to TiDB: the v10 handshake with `mysql_native_password`
 * (TiDB's default plugin, pingcap/tidb pkg/parser/mysql/const.go `AuthNativePassword`), an
 * AuthSwitchRequest when the client answers with another plugin, COM_QUERY answered by an OK packet,
 * an ERR packet or a text result set (column definitions and rows closed by EOF packets, as without
 * CLIENT_DEPRECATE_EOF), COM_PING and COM_QUIT. One user, `root`, with one password.
 * Not spoken: TLS, compression, prepared statements, COM_INIT_DB, packets of 16 MiB or more.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';

/** What a query gets back: an OK packet, an ERR packet, or a result set of text columns. */
export type WireAnswer =
  | { readonly ok: { readonly affectedRows?: number; readonly warnings?: number } }
  | { readonly error: WireError }
  | { readonly columns: readonly string[]; readonly rows: readonly (readonly (string | null)[])[] };

export interface WireError {
  readonly code: number;
  readonly sqlState: string;
  readonly message: string;
}

export interface WireServerOptions {
  /** The version string of the greeting (`8.0.11-TiDB-v8.5.1`). */
  readonly serverVersion: string;
  /** root's password; the empty string for none. */
  readonly rootPassword: string;
  /** Answers one COM_QUERY. */
  readonly query: (sql: string) => WireAnswer;
}

const NATIVE = 'mysql_native_password';
// A subset of TiDB's pkg/server/server.go `defaultCapability` (no SSL, compression, LOCAL INFILE, DEPRECATE_EOF):
// LONG_PASSWORD, FOUND_ROWS, LONG_FLAG, CONNECT_WITH_DB, PROTOCOL_41, TRANSACTIONS, SECURE_CONNECTION,
// MULTI_STATEMENTS, MULTI_RESULTS, PLUGIN_AUTH.
const CAPABILITIES = 0x1 | 0x2 | 0x4 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x10000 | 0x20000 | 0x80000;
/** utf8mb4_bin, `mysql.DefaultCollationID`, announced in the greeting (pkg/server/conn.go `writeInitialHandshake`). */
const UTF8MB4_BIN = 46;
const SERVER_STATUS_AUTOCOMMIT = 0x0002;
const COM_QUIT = 0x01;
const COM_QUERY = 0x03;
const COM_PING = 0x0e;
const MYSQL_TYPE_VAR_STRING = 0xfd;

const sha1 = (...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash('sha1')).digest();

/** What a client must send for `password` under mysql_native_password (empty for no password). */
function expectedAuth(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const p1 = sha1(Buffer.from(password, 'utf8'));
  const p2 = sha1(scramble, sha1(p1));
  return Buffer.from(p1.map((b, i) => b ^ p2[i]));
}

function lenenc(n: number): Buffer {
  if (n < 0xfb) return Buffer.from([n]);
  if (n < 0x10000) return Buffer.from([0xfc, n & 0xff, n >> 8]);
  if (n < 0x1000000) return Buffer.from([0xfd, n & 0xff, (n >> 8) & 0xff, n >> 16]);
  const b = Buffer.alloc(9);
  b[0] = 0xfe;
  b.writeBigUInt64LE(BigInt(n), 1);
  return b;
}

function lenencString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([lenenc(b.length), b]);
}

const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff];

/** One client connection: packet framing with sequence ids, then the handshake and the command loop. */
class Session {
  private buffered = Buffer.alloc(0);
  private readonly ready: Buffer[] = [];
  private wake?: () => void;
  private closed = false;
  private seq = 0;

  constructor(
    private readonly socket: Socket,
    private readonly options: WireServerOptions,
    private readonly connectionId: number,
  ) {
    socket.on('data', (chunk: Buffer) => this.feed(chunk));
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  async run(): Promise<void> {
    if (!(await this.handshake())) return void this.socket.end();
    for (;;) {
      const command = await this.next();
      if (command === undefined || command[0] === COM_QUIT) return void this.socket.end();
      if (command[0] === COM_PING) this.ok();
      else if (command[0] === COM_QUERY) this.answer(this.options.query(command.toString('utf8', 1)));
      else this.err({ code: 1105, sqlState: 'HY000', message: `command 0x${command[0].toString(16)} not simulated` });
    }
  }

  private feed(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4 && this.buffered.length >= 4 + this.buffered.readUIntLE(0, 3)) {
      const n = this.buffered.readUIntLE(0, 3);
      this.seq = (this.buffered[3] + 1) & 0xff;
      this.ready.push(this.buffered.subarray(4, 4 + n));
      this.buffered = this.buffered.subarray(4 + n);
    }
    this.wake?.();
  }

  /** The next packet's payload; undefined once the client is gone. */
  private async next(): Promise<Buffer | undefined> {
    while (this.ready.length === 0) {
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    return this.ready.shift();
  }

  private send(payload: Buffer): void {
    if (this.closed) return;
    const header = Buffer.from([payload.length & 0xff, (payload.length >> 8) & 0xff, payload.length >> 16, this.seq]);
    this.seq = (this.seq + 1) & 0xff;
    this.socket.write(Buffer.concat([header, payload]));
  }

  /** Greeting, HandshakeResponse41, optional AuthSwitchRequest; true once root is in. */
  private async handshake(): Promise<boolean> {
    // 20 scramble bytes, none of them NUL (the greeting carries them NUL-terminated).
    const scramble = Buffer.from(randomBytes(20).map((b) => (b % 127) + 1));
    const id = Buffer.alloc(4);
    id.writeUInt32LE(this.connectionId);
    this.seq = 0;
    this.send(
      Buffer.concat([
        Buffer.from([10]),
        Buffer.from(`${this.options.serverVersion}\0`, 'latin1'),
        id,
        scramble.subarray(0, 8),
        Buffer.from([0, ...u16(CAPABILITIES), UTF8MB4_BIN, ...u16(SERVER_STATUS_AUTOCOMMIT), ...u16(CAPABILITIES >>> 16), 21]),
        Buffer.alloc(10),
        scramble.subarray(8),
        Buffer.from(`\0${NATIVE}\0`, 'latin1'),
      ]),
    );
    const response = await this.next();
    if (response === undefined || response.length < 32) return false;
    const flags = response.readUInt32LE(0);
    let at = 32;
    const userEnd = response.indexOf(0, at);
    const user = response.toString('utf8', at, userEnd < 0 ? response.length : userEnd);
    at = userEnd + 1;
    // The auth response with a one-byte length (CLIENT_SECURE_CONNECTION; a lenenc length under
    // CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA reads the same for answers under 251 bytes).
    let auth = response.subarray(at + 1, at + 1 + response[at]);
    at += 1 + response[at];
    if (flags & 0x8 && at < response.length) at = response.indexOf(0, at) + 1; // CLIENT_CONNECT_WITH_DB: the database, ignored
    const plugin = flags & 0x80000 && at < response.length ? response.toString('latin1', at, response.indexOf(0, at)) : NATIVE;
    if (plugin !== NATIVE) {
      // AuthSwitchRequest (0xfe, plugin, scramble) back to mysql_native_password, with the same scramble.
      this.send(Buffer.concat([Buffer.from(`\xfe${NATIVE}\0`, 'latin1'), scramble, Buffer.from([0])]));
      const switched = await this.next();
      if (switched === undefined) return false;
      auth = switched;
    }
    if (user !== 'root' || !auth.equals(expectedAuth(this.options.rootPassword, scramble))) {
      // ErrAccessDenied as TiDB words it (pkg/errno/errname.go), for the peer's address.
      const host = (this.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
      this.err({
        code: 1045,
        sqlState: '28000',
        message: `Access denied for user '${user}'@'${host}' (using password: ${auth.length > 0 ? 'YES' : 'NO'})`,
      });
      return false;
    }
    this.ok();
    return true;
  }

  private answer(a: WireAnswer): void {
    if ('ok' in a) return this.ok(a.ok.affectedRows ?? 0, a.ok.warnings ?? 0);
    if ('error' in a) return this.err(a.error);
    this.send(lenenc(a.columns.length));
    for (const name of a.columns) {
      this.send(
        Buffer.concat([
          lenencString('def'),
          lenencString(''),
          lenencString(''),
          lenencString(''),
          lenencString(name),
          lenencString(name),
          Buffer.from([0x0c, ...u16(UTF8MB4_BIN), 0, 1, 0, 0, MYSQL_TYPE_VAR_STRING, 0, 0, 0, 0, 0]),
        ]),
      );
    }
    this.eof();
    for (const row of a.rows) this.send(Buffer.concat(row.map((v) => (v === null ? Buffer.from([0xfb]) : lenencString(v)))));
    this.eof();
  }

  private ok(affectedRows = 0, warnings = 0): void {
    this.send(
      Buffer.concat([
        Buffer.from([0x00]),
        lenenc(affectedRows),
        lenenc(0),
        Buffer.from([...u16(SERVER_STATUS_AUTOCOMMIT), ...u16(warnings)]),
      ]),
    );
  }

  private eof(): void {
    this.send(Buffer.from([0xfe, 0, 0, ...u16(SERVER_STATUS_AUTOCOMMIT)]));
  }

  private err(e: WireError): void {
    this.send(
      Buffer.concat([Buffer.from([0xff, ...u16(e.code)]), Buffer.from(`#${e.sqlState}`, 'latin1'), Buffer.from(e.message, 'utf8')]),
    );
  }
}

/** A MySQL-protocol server on loopback that hands every query to `options.query`. */
export class MysqlWireServer {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private connections = 0;

  constructor(private readonly options: WireServerOptions) {}

  /** Listens on `host` (@default 127.0.0.1) and `port` (@default a free one); returns the port. */
  async start(host = '127.0.0.1', port = 0): Promise<number> {
    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      void new Session(socket, this.options, ++this.connections).run().catch(() => socket.destroy());
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    return (server.address() as { port: number }).port;
  }

  /** Closes the listener and every connection. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
