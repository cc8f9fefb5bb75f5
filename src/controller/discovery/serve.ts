/**
 * PD discovery over HTTP: only the replica that leads, with synced caches, answers; every request is
 * counted and logged.
 */
import type { RequestHandler } from '../runtime/http-server';
import type { Logger } from '../runtime/log';
import type { Metrics } from '../runtime/metrics';
import type { Discovery } from './discovery';

export function discoveryHandler(d: {
  readonly discovery: Discovery;
  readonly serving: () => boolean;
  readonly metrics: Metrics;
  readonly log: Logger;
}): RequestHandler {
  return (req, res) =>
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      let status: number;
      let body: string;
      if (!d.serving()) {
        [status, body] = [503, 'this replica is not serving discovery (not the leader, or caches not synced)\n'];
      } else {
        try {
          ({ status, body } = await d.discovery.handle(req.method ?? 'GET', req.url ?? '/', req.socket.remoteAddress));
        } catch (err) {
          [status, body] = [500, `${(err as Error).message}\n`];
        }
      }
      // Label values from a fixed set: a series per path anyone can send would grow without bound.
      const route = path.split('/')[1];
      d.metrics.inc('tidb_gitops_discovery_requests_total', {
        path: route === 'new' || route === 'verify' || route === 'prestop' ? route : 'other',
        code: String(status),
      });
      const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path;
      if (status >= 400)
        d.log.info('discovery request refused', {
          path: shown,
          status,
          reason: body.trim().slice(0, 500),
          remote: req.socket.remoteAddress,
        });
      else d.log.info('discovery answered', { path: shown, answer: body });
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(body);
    })();
}
