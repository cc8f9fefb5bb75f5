/**
 * Ports for the servers the tests start. `listen(0)` would hand out ephemeral ports, which are the
 * ones the kernel also gives outgoing connections, and between the probe and a server binding it
 * another Jest worker (or a client socket of this one) may take it. So each Jest worker takes ports
 * from its own block below the ephemeral range (Linux: 32768 and up), in turn, each checked free.
 */
import { createServer } from 'node:net';

const FIRST = 20_000;
const BLOCK = 1_000;
const BLOCKS = 12;
const worker = Math.max(0, Number(process.env.JEST_WORKER_ID ?? 1) - 1) % BLOCKS;
let next = 0;

/** A port of this worker's block that nothing listens on now, on `host`. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let tries = 0; tries < BLOCK; tries++) {
    const port = FIRST + worker * BLOCK + (next++ % BLOCK);
    if (await canListen(port, host)) return port;
  }
  throw new Error(`no free port in ${FIRST + worker * BLOCK}-${FIRST + worker * BLOCK + BLOCK - 1}`);
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}
