/** A problem in one place of one input document. */
export interface SpecIssue {
  /** Path in the document, e.g. `spec.tikv.replica`. */
  readonly path: string;
  readonly message: string;
  /** 1-based line in the source file, when the document came from a file. @default none */
  readonly line?: number;
}

/** Where an input document came from, for messages. */
export interface SourceRef {
  /** File path as the user gave it, or `<stdin>`. */
  readonly file: string;
  /** 1-based index of the document in a multi-document file. */
  readonly document: number;
}

const SPEC_ERROR = Symbol.for('tidb-gitops.SpecError');

/** One or more problems with a TidbCluster; its message lists them all, one per line. */
export class SpecError extends Error {
  /**
   * `instanceof` by a mark rather than by class: `tidb-gitops` and `tidb-gitops/inputs` are bundles
   * with a copy each, and an error thrown through one is still a SpecError to the other.
   */
  static override [Symbol.hasInstance](x: unknown): boolean {
    return typeof x === 'object' && x !== null && SPEC_ERROR in x;
  }

  constructor(
    readonly issues: readonly SpecIssue[],
    readonly source?: SourceRef,
  ) {
    super(issues.map((i) => formatIssue(i, source)).join('\n'));
    this.name = 'SpecError';
    Object.defineProperty(this, SPEC_ERROR, { value: true });
  }

  /** The same issues, attributed to a file and document. */
  at(source: SourceRef): SpecError {
    return new SpecError(this.issues, source);
  }
}

/** `file: document N: path (line L): message` — the form every input error takes. */
export function formatIssue(issue: SpecIssue, source?: SourceRef): string {
  const where = source ? `${source.file}: document ${source.document}: ` : '';
  const line = issue.line !== undefined ? ` (line ${issue.line})` : '';
  return `${where}${issue.path}${line}: ${issue.message}`;
}

/**
 * `value` quoted for a message: JSON's quoting, plus escapes for what JSON leaves raw but a terminal or
 * log would hide or mangle (DEL, C1 controls, the Unicode line and paragraph separators).
 */
export function quoted(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
