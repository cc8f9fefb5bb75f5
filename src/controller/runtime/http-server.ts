/**
 * The controller's HTTP servers: limits that keep a slow client from holding anything for long, the
 * listen and close the manager needs, and the metrics and health endpoints.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { CONTROLLER_HTTP } from '../../tidbcluster/contract';
import type { Metrics } from './metrics';

export type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * Both servers answer small GETs at once, so a client that sends slowly holds nothing for long: the
 * headers within 5 s, the whole request within 10 s, checked every second (Node checks every 30 s
 * unless told), headers at most 16 KiB (a longer path gets 431).
 */
const SERVER_LIMITS = { headersTimeout: 5_000, requestTimeout: 10_000, connectionsCheckingInterval: 1_000, maxHeaderSize: 16 * 1024 };

/** An HTTP server, or an HTTPS one that requires client certificates signed by `mtls.ca`. */
export function createServer(handler: RequestHandler, mtls?: https.ServerOptions): http.Server | https.Server {
  return mtls
    ? https.createServer({ ...SERVER_LIMITS, ...mtls, requestCert: true, rejectUnauthorized: true }, handler)
    : http.createServer(SERVER_LIMITS, handler);
}

/** The servers a process runs, closed together. */
export class Servers {
  private readonly servers: (http.Server | https.Server)[] = [];

  /** Listens on `host:port`; resolves with the port bound (useful when 0 was asked for). */
  listen(server: http.Server | https.Server, port: number, host: string): Promise<number> {
    this.servers.push(server);
    server.maxHeadersCount = 50;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(() => r(undefined)))));
    for (const s of this.servers) (s as http.Server).closeAllConnections?.();
  }
}

/**
 * `/metrics` (Prometheus text), the liveness path (ok until the process stops) and the readiness
 * path (ok while `notReady` names no reason).
 */
export function healthHandler(d: {
  readonly metrics: Metrics;
  readonly stopping: () => boolean;
  readonly notReady: () => string | undefined;
}): RequestHandler {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (path === '/metrics') {
      d.metrics.set('process_resident_memory_bytes', {}, process.memoryUsage().rss);
      return send(200, d.metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
    }
    if (path === CONTROLLER_HTTP.live) return d.stopping() ? send(503, 'stopping\n') : send(200, 'ok\n');
    if (path === CONTROLLER_HTTP.ready) {
      if (d.stopping()) return send(503, 'stopping\n');
      const reason = d.notReady();
      return reason ? send(503, `${reason}\n`) : send(200, 'ok\n');
    }
    send(404, 'not found\n');
  };
}
