/**
 * API errors as the Kubernetes API server reports them: an HTTP code plus a `Status` body whose
 * `reason` clients switch on.
 */

/** The `reason` Kubernetes gives for each HTTP code it answers with. */
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The Status reason for an HTTP code (`Unknown` for codes Kubernetes has no reason for). */
export function reasonFor(code: number): string {
  return REASONS[code] ?? 'Unknown';
}

/** What a Status names in `details`: the object the failure is about. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  retryAfterSeconds?: number;
}

/** A failed API call; the HTTP layer turns it into the status code and a `Status` body. */
export class KubeApiError extends Error {
  /**
   * @param code HTTP status code.
   * @param message human-readable message, as the API server words it.
   * @param reason machine-readable reason; derived from `code` when omitted.
   * @param details the object concerned.
   */
  constructor(
    readonly code: number,
    message: string,
    readonly reason: string = reasonFor(code),
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  /** The `Status` object the API server sends for this error. */
  toStatus(): Record<string, unknown> {
    return failureStatus(this.code, this.message, this.reason, this.details);
  }
}

/** A `kind: Status` failure body. */
export function failureStatus(
  code: number,
  message: string,
  reason: string = reasonFor(code),
  details?: StatusDetails,
): Record<string, unknown> {
  // Keys in the order kube-apiserver writes them (metav1.Status field order).
  const status: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason };
  if (details) status.details = details;
  status.code = code;
  return status;
}

/** `<resource>.<group>`, or just `<resource>` for the core group, as messages name a resource. */
export function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** 404: the named object does not exist. */
export function notFound(group: string, resource: string, name: string): KubeApiError {
  return new KubeApiError(404, `${qualifiedResource(group, resource)} "${name}" not found`, 'NotFound', {
    name,
    group,
    kind: resource,
  });
}

/** 409 AlreadyExists: create of a name that is taken. */
export function alreadyExists(group: string, resource: string, name: string): KubeApiError {
  return new KubeApiError(409, `${qualifiedResource(group, resource)} "${name}" already exists`, 'AlreadyExists', {
    name,
    group,
    kind: resource,
  });
}

/**
 * 409 Conflict: a write based on a stale resourceVersion, or (with `cause`) a failed precondition,
 * whose words follow `Operation cannot be fulfilled on <resource> "<name>": `.
 */
export function conflict(group: string, resource: string, name: string, cause?: string): KubeApiError {
  return new KubeApiError(
    409,
    `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": ` +
      (cause ?? 'the object has been modified; please apply your changes to the latest version and try again'),
    'Conflict',
    { name, group, kind: resource },
  );
}

/** 400 BadRequest with the given message. */
export function badRequest(message: string): KubeApiError {
  return new KubeApiError(400, message, 'BadRequest');
}

/** 422 Invalid: the object fails validation. */
export function invalid(kind: string, name: string, problems: string[]): KubeApiError {
  return new KubeApiError(422, `${kind} "${name}" is invalid: ${problems.join(', ')}`, 'Invalid', { name, kind });
}
