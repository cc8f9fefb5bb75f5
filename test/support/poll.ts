/**
 * Polling a server started by a test until a condition holds: every 200 ms, bounded by a timeout far
 * above what a loaded machine needs, failing at once if the server's process has exited, with the
 * server's log in the error either way.
 */

export interface PolledServer {
  /** The server's name in messages (`prometheus`, `vmagent`). */
  readonly name: string;
  /** Why the process is no longer running, or undefined while it runs. */
  readonly exited: () => string | undefined;
  /** The end of its log. */
  readonly tail: () => string;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the first truthy value of `pred`; its errors are retried and the last is reported. */
export async function pollUntil<T>(server: PolledServer, pred: () => Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const exited = server.exited();
    if (exited !== undefined)
      throw new Error(`${server.name} exited (${exited}) while waiting for ${what}\n${server.name} log:\n${server.tail()}`);
    try {
      const v = await pred();
      if (v) return v as NonNullable<T>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}\n${server.name} log:\n${server.tail()}`,
      );
    }
    await sleep(200);
  }
}

/** A server process a test started, its output kept for messages. */
export interface LoggedServer {
  readonly server: PolledServer;
  /** The whole output so far (stdout and stderr). */
  readonly log: () => string;
  /** Stops the process (SIGTERM, then waits for it) and removes `dir`. */
  readonly stop: () => Promise<void>;
}

/** Starts `command` with its stdout and stderr kept; `dir` (its files) goes when it is stopped. */
export function startLogged(
  name: string,
  command: string,
  args: readonly string[],
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): LoggedServer {
  const child: ChildProcess = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  let exit: string | undefined;
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  child.on('exit', (code, signal) => (exit = `${code ?? signal}`));
  return {
    server: { name, exited: () => exit, tail: () => log.slice(-4000) },
    log: () => log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
