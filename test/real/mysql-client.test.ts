/**
 * The controller's MySQL-protocol client against a real server: Debian's MariaDB, started in TiDB's
 * initial state (root@% with no password), plain and with TLS. caching_sha2_password, which MariaDB
 * does not have, is checked against its published formula and against a scripted server that logs
 * in as MySQL 8 and TiDB do (an AuthSwitchRequest, then fast or full authentication).
 */
import { createHash, generateKeyPairSync, privateDecrypt, constants, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import {
  connectMysql,
  ER_ACCESS_DENIED,
  MysqlError,
  nativeScramble,
  sha2Scramble,
  sqlString,
  type MysqlOptions,
} from '../../src/controller/clients/mysql';
import { makeCertificates, startMariaDb, type MariaDb, type MariaDbTls } from '../support/mariadb';
import { MARIADB, requires } from '../support/requires';

jest.setTimeout(60_000);

let db: MariaDb;
let tlsDb: MariaDb;

const to = (d: MariaDb, user: string, password: string, more: Partial<MysqlOptions> = {}) =>
  connectMysql({ host: d.host, port: d.port, user, password, ...more });

/** The MysqlError `p` rejects with; checks that `secret` is nowhere in it. */
async function refusal(p: Promise<unknown>, secret?: string): Promise<MysqlError> {
  const err = await p.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  if (!(err instanceof MysqlError)) throw err;
  if (secret) expect(`${err.message} ${err.stack} ${JSON.stringify(err)}`).not.toContain(secret);
  return err;
}

/** The tests that log in to a real server: Debian's MariaDB, plain and with TLS. */
const mariadb = requires(MARIADB);

mariadb.describe('a real MySQL-protocol server', () => {
  beforeAll(async () => {
    // Each is kept as soon as it is up, so that afterAll stops it even when the other failed to start.
    const started = await Promise.allSettled([startMariaDb().then((d) => (db = d)), startMariaDb({ tls: true }).then((d) => (tlsDb = d))]);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  });

  afterAll(async () => {
    await Promise.all([db?.stop(), tlsDb?.stop()]);
  });

  describe('against MariaDB', () => {
    test('logs in as root with no password and reads columns, rows and NULL', async () => {
      const c = await to(db, 'root', '');
      const r = await c.query("SELECT 1, NULL, 'x'");
      expect(r.columns).toEqual(['1', 'NULL', 'x']);
      expect(r.rows).toEqual([['1', null, 'x']]);
      expect(r.affectedRows).toBe(0);
      expect((await c.query('SELECT @@version')).rows[0][0]).toBe(c.serverVersion);
      expect(c.serverVersion).toMatch(/^10\.\d+\.\d+-MariaDB/);
      await c.close();
    });

    test('OK packets say how many rows changed', async () => {
      const c = await to(db, 'root', '');
      expect((await c.query('CREATE DATABASE ok_packets')).affectedRows).toBe(1);
      expect((await c.query('CREATE TABLE ok_packets.t (v INT)')).affectedRows).toBe(0);
      expect((await c.query('INSERT INTO ok_packets.t VALUES (1), (2), (3)')).affectedRows).toBe(3);
      expect(await db.sql('SELECT SUM(v) FROM ok_packets.t')).toBe('6\n');
      await c.close();
    });

    test('an ERR packet becomes a MysqlError with its number and SQL state, and the connection goes on', async () => {
      const c = await to(db, 'root', '');
      const e = await refusal(c.query('SELEC 1'));
      expect([e.code, e.sqlState]).toEqual([1064, '42000']);
      expect(e.message).toMatch(/You have an error in your SQL syntax/);
      expect((await c.query('SELECT 2')).rows).toEqual([['2']]);
      await c.close();
    });

    test('fails with 1045 on a wrong password, which is nowhere in the error', async () => {
      const wrong = 'wrong-Secret-4711';
      const e = await refusal(to(db, 'root', wrong), wrong);
      expect([e.code, e.sqlState]).toEqual([ER_ACCESS_DENIED, '28000']);
      expect(e.message).toMatch(/^Access denied for user 'root'/);
    });

    test("sets root's password with quotes, backslashes and non-ASCII, and logs in with it alone", async () => {
      const password = "it's a \\ pass\"word; ü 🔑 '' \\' --\n";
      const c = await to(db, 'root', '');
      try {
        await c.query(`ALTER USER 'root'@'%' IDENTIFIED BY ${sqlString(password)}`);
        const again = await to(db, 'root', password);
        expect((await again.query('SELECT CURRENT_USER()')).rows).toEqual([['root@%']]);
        await again.close();
        expect((await refusal(to(db, 'root', ''))).code).toBe(ER_ACCESS_DENIED);
        expect((await refusal(to(db, 'root', `${password}x`), password)).code).toBe(ER_ACCESS_DENIED);
      } finally {
        await c.close();
        await db.sql("ALTER USER 'root'@'%' IDENTIFIED BY ''");
      }
    });

    test('sqlString with noBackslashEscapes is read right under NO_BACKSLASH_ESCAPES', async () => {
      const password = "back\\slash 'quote' ü";
      const c = await to(db, 'root', '');
      await c.query("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')");
      await c.query(`CREATE USER nbe@'%' IDENTIFIED BY ${sqlString(password, true)}`);
      await c.close();
      await (await to(db, 'nbe', password)).close();
    });

    test('sqlString round-trips what the server reads', async () => {
      const c = await to(db, 'root', '');
      for (const value of ["a'b", 'a\\b', 'a\nb\r\0\x1a\t\b', "\\'", '\\', '', 'ü 🔑', '%_']) {
        expect((await c.query(`SELECT ${sqlString(value)}`)).rows[0][0]).toBe(value);
      }
      await c.close();
    });

    test('reads rows that span many TCP chunks', async () => {
      const c = await to(db, 'root', '');
      const big = await c.query("SELECT REPEAT('a', 100000), REPEAT('b', 5)");
      expect(big.rows[0][0]).toBe('a'.repeat(100000));
      expect(big.rows[0][1]).toBe('bbbbb');
      const many = await c.query('SELECT seq, REPEAT(CHAR(65 + seq % 26), seq % 300) FROM mysql.seq_1_to_5000');
      expect(many.rows).toHaveLength(5000);
      expect(many.rows[4999]).toEqual(['5000', 'I'.repeat(200)]);
      await c.close();
    });

    test('a query past its bound is cut off with code 0, and the connection is gone', async () => {
      const c = await to(db, 'root', '', { timeoutMs: 300 });
      const started = Date.now();
      const e = await refusal(c.query('SELECT SLEEP(5)'));
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(e.code).toBe(0);
      expect(e.message).toBe(`${db.host}:${db.port}: no answer to a query within 300 ms`);
      expect((await refusal(c.query('SELECT 1'))).code).toBe(0);
      await c.close();
    });

    test('a server that closes the connection rejects the query waiting on it', async () => {
      const c = await to(db, 'root', '');
      const id = (await c.query('SELECT CONNECTION_ID()')).rows[0][0];
      const pending = refusal(c.query('SELECT SLEEP(20)'));
      await db.sql(`KILL CONNECTION ${id}`);
      // MariaDB says why (1927, connection killed) before it closes; either way the query fails.
      expect([0, 1927]).toContain((await pending).code);
      expect((await refusal(c.query('SELECT 1'))).code).toBe(0);
      await c.close();
    });

    test('fails with code 0 when nothing listens, and when the server never greets', async () => {
      const closedPort = await new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const { port } = s.address() as { port: number };
          s.close(() => resolve(port));
        });
      });
      expect((await refusal(connectMysql({ host: '127.0.0.1', port: closedPort, user: 'root', password: '' }))).code).toBe(0);
      const held: Socket[] = [];
      const silent = createServer((s) => void held.push(s));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const port = (silent.address() as { port: number }).port;
      try {
        const e = await refusal(connectMysql({ host: '127.0.0.1', port, user: 'root', password: '', timeoutMs: 200 }));
        expect([e.code, e.message]).toEqual([0, `127.0.0.1:${port}: no answer to the handshake within 200 ms`]);
      } finally {
        for (const s of held) s.destroy();
        await new Promise((r) => silent.close(r));
      }
    });

    test('names a plugin it does not speak when the server switches to it', async () => {
      await db.sql("INSTALL SONAME 'auth_ed25519'");
      await db.sql("CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-Secret-1')");
      const e = await refusal(to(db, 'ed', 'ed-Secret-1'), 'ed-Secret-1');
      expect([e.code, e.message]).toEqual([
        0,
        expect.stringContaining('the authentication plugin client_ed25519, which this client does not speak'),
      ]);
    });
  });

  describe('against MariaDB with TLS', () => {
    const tls = () => ({ ca: tlsDb.tls!.ca, cert: tlsDb.tls!.clientCert, key: tlsDb.tls!.clientKey });

    test('connects over TLS with the CA and a client certificate', async () => {
      const c = await to(tlsDb, 'root', '', { tls: tls() });
      const [[name, cipher]] = (await c.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")).rows;
      expect(name).toBe('Ssl_cipher');
      expect(cipher).not.toBe('');
      await c.close();
    });

    test('a user that requires X509 logs in with the client certificate only', async () => {
      await tlsDb.sql("CREATE USER x509@'%' IDENTIFIED BY 'x509-Secret' REQUIRE X509");
      await (await to(tlsDb, 'x509', 'x509-Secret', { tls: tls() })).close();
      expect((await refusal(to(tlsDb, 'x509', 'x509-Secret', { tls: { ca: tlsDb.tls!.ca } }), 'x509-Secret')).code).toBe(ER_ACCESS_DENIED);
      expect((await refusal(to(tlsDb, 'x509', 'x509-Secret'), 'x509-Secret')).code).toBe(ER_ACCESS_DENIED);
    });

    test('refuses a server whose certificate another CA signed', async () => {
      // The plain server's harness made no CA: the client certificate stands in for one that did not sign the server's.
      const e = await refusal(to(tlsDb, 'root', '', { tls: { ...tls(), ca: tlsDb.tls!.clientCert } }));
      expect(e.code).toBe(0);
      expect(e.message).toMatch(new RegExp(`^${tlsDb.host}:${tlsDb.port}: TLS: `));
    });

    test('asking a server without TLS for it fails', async () => {
      const e = await refusal(to(db, 'root', '', { tls: tls() }));
      expect(e.message).toBe(`${db.host}:${db.port}: the server does not offer TLS`);
    });
  });
});

describe('the scrambles', () => {
  const scramble = Buffer.from('0123456789abcdefghij');
  const sha = (alg: string, ...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash(alg)).digest();
  const xor = (a: Buffer, b: Buffer) => Buffer.from(a.map((v, i) => v ^ b[i]));
  const pw = Buffer.from('sécret', 'utf8');

  test('mysql_native_password: SHA1(pw) XOR SHA1(scramble || SHA1(SHA1(pw)))', () => {
    expect(nativeScramble('sécret', scramble)).toEqual(xor(sha('sha1', pw), sha('sha1', scramble, sha('sha1', sha('sha1', pw)))));
    expect(nativeScramble('', scramble)).toHaveLength(0);
  });

  test('caching_sha2_password: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || scramble)', () => {
    expect(sha2Scramble('sécret', scramble)).toEqual(xor(sha('sha256', pw), sha('sha256', sha('sha256', sha('sha256', pw)), scramble)));
    expect(sha2Scramble('', scramble)).toHaveLength(0);
  });
});

describe('caching_sha2_password against a scripted server', () => {
  const PASSWORD = 'sha2-Secret-ü';
  /** The scripted server's certificates, under a CA of their own. */
  let certs: MariaDbTls;
  let certDir: string;
  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'mysql-client-tls-'));
    certs = await makeCertificates(certDir);
  });
  afterAll(() => rmSync(certDir, { recursive: true, force: true }));

  test('fast authentication after an AuthSwitchRequest', async () => {
    const s = await sha2Server('fast');
    try {
      const c = await connectMysql({ host: '127.0.0.1', port: s.port, user: 'root', password: PASSWORD });
      expect(c.serverVersion).toBe('8.0.11-TiDB-v8.5.0');
      expect((await c.query('SET x = 1')).affectedRows).toBe(7);
      await c.close();
    } finally {
      await s.close();
    }
  });

  test('full authentication: the password encrypted with the public key over plain TCP', async () => {
    const s = await sha2Server('rsa');
    try {
      await (await connectMysql({ host: '127.0.0.1', port: s.port, user: 'root', password: PASSWORD })).close();
      const e = await refusal(connectMysql({ host: '127.0.0.1', port: s.port, user: 'root', password: 'other-Secret' }), 'other-Secret');
      expect(e.code).toBe(ER_ACCESS_DENIED);
    } finally {
      await s.close();
    }
  });

  test('full authentication over TLS: the password in the clear, as TiDB wants it', async () => {
    const s = await sha2Server('tls');
    try {
      const c = await connectMysql({ host: '127.0.0.1', port: s.port, user: 'root', password: PASSWORD, tls: { ca: certs.ca } });
      expect((await c.query('SELECT 1')).affectedRows).toBe(7);
      await c.close();
    } finally {
      await s.close();
    }
  });

  test('no password: an empty answer, and no full authentication', async () => {
    const s = await sha2Server('fast', '');
    try {
      await (await connectMysql({ host: '127.0.0.1', port: s.port, user: 'root', password: '' })).close();
    } finally {
      await s.close();
    }
  });

  /**
   * A server that greets as TiDB does (default plugin mysql_native_password), switches the client to
   * caching_sha2_password with a new scramble, then: `fast` says the cache matched; `rsa` asks for the
   * full authentication and hands out its public key; `tls` does so over TLS (the certificates of
   * its own CA). Every query is answered with OK, 7 rows affected.
   */
  async function sha2Server(mode: 'fast' | 'rsa' | 'tls', password = PASSWORD): Promise<{ port: number; close(): Promise<void> }> {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const sockets = new Set<Socket>();
    const server: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      void converse(socket, mode, password, publicKey.export({ type: 'spki', format: 'pem' }).toString(), (b) =>
        privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING }, b),
      ).catch(() => socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as { port: number }).port,
      close: () => {
        for (const s of sockets) s.destroy();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    };
  }

  async function converse(plain: Socket, mode: string, password: string, pem: string, decrypt: (b: Buffer) => Buffer): Promise<void> {
    let link = packets(plain);
    let socket: Socket = plain;
    let seq = 0;
    const send = (payload: Buffer) => {
      socket.write(Buffer.concat([Buffer.from([payload.length & 0xff, payload.length >> 8, payload.length >> 16, seq++ & 0xff]), payload]));
    };
    const receive = async () => {
      const p = await link.next();
      seq = p.seq + 1;
      return p.payload;
    };
    const ok = (affected = 0) => send(Buffer.from([0x00, affected, 0, 2, 0, 0, 0]));
    const salt = Buffer.from(randomBytes(20).map((b) => (b % 94) + 33));
    const caps = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000 | (mode === 'tls' ? 0x800 : 0);
    const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff];
    send(
      Buffer.concat([
        Buffer.from('\x0a8.0.11-TiDB-v8.5.0\0', 'latin1'),
        Buffer.from([1, 0, 0, 0]),
        salt.subarray(0, 8),
        Buffer.from([0, ...u16(caps), 45, 2, 0, ...u16(caps >> 16), 21]),
        Buffer.alloc(10),
        salt.subarray(8),
        Buffer.from('\0mysql_native_password\0'),
      ]),
    );
    let response = await receive();
    if (mode === 'tls') {
      expect(response).toHaveLength(32);
      // The client's TLS hello may have come with the SSL request: the TLS layer reads it first.
      socket = new TLSSocket(replay(plain, link.stop()), { isServer: true, cert: certs.cert, key: certs.key });
      link = packets(socket);
      response = await receive();
    }
    // HandshakeResponse41: flags, max packet, utf8mb4_general_ci, filler, then the user, the scramble, the plugin.
    expect(response.readUInt32LE(0) & caps).toBe(caps);
    expect(response[8]).toBe(45);
    expect(response.toString('latin1', 32, 37)).toBe('root\0');
    expect(response.toString('latin1').endsWith('mysql_native_password\0')).toBe(true);
    const salt2 = Buffer.from(randomBytes(20).map((b) => (b % 94) + 33));
    send(Buffer.concat([Buffer.from('\xfecaching_sha2_password\0', 'latin1'), salt2, Buffer.from([0])]));
    const auth = await receive();
    if (password === '') {
      expect(auth).toHaveLength(0);
    } else if (mode === 'fast') {
      if (!auth.equals(sha2Scramble(password, salt2))) return send(Buffer.from('\xff\x15\x04#28000Access denied', 'latin1'));
      send(Buffer.from([0x01, 0x03]));
    } else {
      send(Buffer.from([0x01, 0x04]));
      let clear = await receive();
      if (mode === 'rsa') {
        expect([...clear]).toEqual([0x02]);
        send(Buffer.concat([Buffer.from([0x01]), Buffer.from(pem)]));
        clear = Buffer.from(decrypt(await receive()).map((b, i) => b ^ salt2[i % 20]));
      }
      if (clear.toString('utf8') !== `${password}\0`) return send(Buffer.from('\xff\x15\x04#28000Access denied', 'latin1'));
    }
    ok();
    for (;;) {
      const command = await receive();
      if (command[0] === 0x01) return void socket.end();
      ok(7);
    }
  }
});

/** `socket` as a stream that gives `head` (bytes already read from it) first: for TLS started mid-stream. */
function replay(socket: Socket, head: Buffer): Duplex {
  const d = new Duplex({ read: () => undefined, write: (c, _e, done) => socket.write(c, done), final: (done) => socket.end(done) });
  d.push(head);
  socket.on('data', (chunk) => d.push(chunk));
  socket.on('end', () => d.push(null));
  return d;
}

/** The packets arriving on a socket, one at a time. */
function packets(socket: Socket): { next(): Promise<{ seq: number; payload: Buffer }>; stop(): Buffer } {
  let buffered = Buffer.alloc(0);
  const ready: { seq: number; payload: Buffer }[] = [];
  let wake: (() => void) | undefined;
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUIntLE(0, 3)) {
      const n = buffered.readUIntLE(0, 3);
      ready.push({ seq: buffered[3], payload: buffered.subarray(4, 4 + n) });
      buffered = buffered.subarray(4 + n);
    }
    wake?.();
  };
  socket.on('data', onData);
  return {
    async next() {
      while (ready.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return ready.shift()!;
    },
    /** Stops reading; the bytes read past the last packet. */
    stop: () => {
      socket.off('data', onData);
      return buffered;
    },
  };
}
