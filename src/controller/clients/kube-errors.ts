/** How the controller tells Kubernetes' errors apart: the status a caller handles, the ones worth a retry, a one-line description. */
import { statusMessage } from './kube-rest';

/** Kubernetes answered with an HTTP status the caller has to handle (e.g. 409 on a Lease). */
export class KubeError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** Statuses worth another try: a conflict, throttling, a server error, no answer (0). */
export const RETRYABLE = (code: number): boolean => code === 409 || code === 429 || code >= 500 || code === 0;

/** The HTTP status an error carries; 0 when it has none (the request did not get an answer). */
export function codeOf(err: unknown): number {
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return 0;
}

/** The server's `Retry-After`, in milliseconds, when it sent one in seconds. */
export function retryAfterMs(err: unknown): number | undefined {
  const h = (err as { headers?: Record<string, string> })?.headers;
  const v = h?.['retry-after'] ?? h?.['Retry-After'];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) * 1000 : undefined;
}

/** An error in one line: the HTTP status and Kubernetes' message where it sent one. */
export function describe(err: unknown): string {
  if (err instanceof Error) {
    const body = (err as { body?: unknown }).body;
    const msg = typeof body === 'string' ? statusMessage(body) : (body as { message?: string } | undefined)?.message;
    const code = codeOf(err);
    return msg ? `HTTP ${code}: ${msg}` : err.message.split('\n')[0];
  }
  return String(err);
}
