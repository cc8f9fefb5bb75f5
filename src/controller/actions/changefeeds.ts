/**
 * Carries out the calls of one changefeed (plan/changefeeds.ts) on TiCDC's open API v2, in order,
 * stopping at the first that fails. The sink's credentials are put in here, from the Secret read this
 * pass, only into what is sent: the URI's password (MySQL and TiDB sinks), its secret query parameters
 * and the replica config's secret fields. What TiCDC answers is said with every credential of the pass
 * hidden.
 */
import type { ChangefeedInfo } from '../../tidbcluster/contract/changefeeds';
import {
  type ChangefeedApiOptions,
  createChangefeed,
  pauseChangefeed,
  redactText,
  removeChangefeed,
  resumeChangefeed,
  updateChangefeed,
} from '../clients/changefeeds';
import { describe } from '../clients/kube-errors';
import type { ChangefeedCall, ChangefeedStep } from '../plan/changefeeds';

export interface ChangefeedCallContext {
  /** A capture's API, `http(s)://<host>:8301`. */
  readonly base: string;
  readonly options: ChangefeedApiOptions;
  /** A value of a credential Secret read this pass; undefined when it is not there. */
  readonly credential: (secret: string, key: string) => string | undefined;
  /** Every credential of the pass, to hide from what is said. */
  readonly known: readonly string[];
}

/** The calls' outcome: all made, or the one that failed and why (credentials hidden). */
export type CallsOutcome = { readonly ok: true } | { readonly ok: false; readonly call: ChangefeedCall; readonly error: string };

/** The sink URI and replica config as sent: Git's, with the credentials from the Secret put in. */
export function withCredentials(
  feed: ChangefeedInfo,
  credential: ChangefeedCallContext['credential'],
): { sinkUri: string; replicaConfig?: Record<string, unknown> } {
  const c = feed.credentials;
  let sinkUri = feed.sinkUri;
  let replicaConfig = feed.replicaConfig ? (structuredClone(feed.replicaConfig) as Record<string, unknown>) : undefined;
  if (!c) return { sinkUri, ...(replicaConfig && { replicaConfig }) };
  const value = (key: string) => {
    const v = credential(c.secret, key);
    if (v === undefined) throw new Error(`the Secret ${c.secret} has no key ${key}`);
    return v;
  };
  if (c.password !== undefined) {
    const password = encodeURIComponent(value(c.password));
    // TiCDC's MySQL sink logs in as root when the URI names no user (pkg/sink/mysql/config.go).
    sinkUri = sinkUri.replace(
      /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)(?:([^@/?#:]*)(?::[^@/?#]*)?@)?/,
      (_m, scheme: string, user?: string) => `${scheme}${user ?? 'root'}:${password}@`,
    );
  }
  for (const [param, key] of Object.entries(c.params ?? {})) {
    const [head, fragment] = sinkUri.split('#', 2);
    sinkUri = `${head}${head.includes('?') ? '&' : '?'}${param}=${encodeURIComponent(value(key))}${fragment === undefined ? '' : `#${fragment}`}`;
  }
  for (const [path, key] of Object.entries(c.fields ?? {})) {
    replicaConfig ??= {};
    const parts = path.split('.');
    let at = replicaConfig;
    for (const p of parts.slice(0, -1)) {
      if (typeof at[p] !== 'object' || at[p] === null || Array.isArray(at[p])) at[p] = {};
      at = at[p] as Record<string, unknown>;
    }
    at[parts[parts.length - 1]] = value(key);
  }
  return { sinkUri, ...(replicaConfig && { replicaConfig }) };
}

/** Makes the step's calls in order. */
export async function runChangefeedCalls(step: ChangefeedStep, ctx: ChangefeedCallContext): Promise<CallsOutcome> {
  for (const call of step.calls) {
    try {
      await one(call, step, ctx);
    } catch (err) {
      return { ok: false, call, error: redactText(describe(err), ctx.known) };
    }
  }
  return { ok: true };
}

async function one(call: ChangefeedCall, step: ChangefeedStep, ctx: ChangefeedCallContext): Promise<void> {
  const { base, options } = ctx;
  const feed = step.feed;
  switch (call) {
    case 'create': {
      const sent = withCredentials(feed!, ctx.credential);
      await createChangefeed(
        base,
        {
          id: step.id,
          sinkUri: sent.sinkUri,
          ...(feed!.startTs !== undefined && { startTs: feed!.startTs }),
          ...(feed!.targetTs !== undefined && { targetTs: feed!.targetTs }),
          ...(sent.replicaConfig && { replicaConfig: sent.replicaConfig }),
        },
        options,
      );
      return;
    }
    case 'update': {
      const sent = withCredentials(feed!, ctx.credential);
      await updateChangefeed(
        base,
        step.id,
        {
          sinkUri: sent.sinkUri,
          ...(feed!.targetTs !== undefined && { targetTs: feed!.targetTs }),
          replicaConfig: sent.replicaConfig ?? {},
        },
        options,
      );
      return;
    }
    case 'pause':
      return pauseChangefeed(base, step.id, options);
    case 'resume':
      return resumeChangefeed(base, step.id, options);
    case 'remove':
      return removeChangefeed(base, step.id, options);
  }
}
