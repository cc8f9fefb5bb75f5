/**
 * How `render`, `render --check` and `diff` report what they found (`--format`): `text` for people
 * (the default), `json` (one document a CI job reads), `github` (GitHub Actions' workflow commands,
 * which the runner turns into annotations on the pull request's files).
 *
 * Every input problem is one line, `file: document N: path (line L): message` (see `formatIssue`);
 * this is the one place that reads such a line back into its parts.
 */
import { suggest } from '../base/suggest';

export const OUTPUT_FORMATS = ['text', 'json', 'github'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The format `value` names, or a usage message (with a did-you-mean). */
export function parseFormat(flag: string, value: string | undefined): OutputFormat | { error: string } {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value ?? '')) return value as OutputFormat;
  if (!value) return { error: `${flag} needs a format: ${OUTPUT_FORMATS.join(', ')}` };
  const hint = suggest(value, OUTPUT_FORMATS);
  return {
    error: `${flag}: unknown format ${JSON.stringify(value)}${hint ? `; did you mean ${hint}?` : ''} (formats: ${OUTPUT_FORMATS.join(', ')})`,
  };
}

/** One input problem, in its parts. */
export interface Problem {
  /** `warning`: the render goes on; `error`: nothing is rendered. */
  readonly severity: 'error' | 'warning';
  /** The input file (as the user named it, `<stdin>` for standard input). @default none: not about one file (an environment variable, the inputs as a whole) */
  readonly file?: string;
  /** 1-based index of the document in the file. @default none */
  readonly document?: number;
  /** Path in the document, e.g. `spec.tikv.replicas`. @default none: about the document or the file */
  readonly path?: string;
  /** 1-based line in the file. @default none: not known */
  readonly line?: number;
  /** What is wrong and what was expected, without the place. */
  readonly message: string;
  /** The whole line, as `--format text` prints it. */
  readonly text: string;
}

const IN_DOCUMENT = /^(.+?): document (\d+): (.*)$/s;
// A path as messages print them (`spec.tidb.env[0]`, `labels["app.kubernetes.io/name"]`), or `(yaml)`.
// One character or bracket at a time: a long key that turns out to be no path fails in linear time.
const AT_PATH = /^((?:[A-Za-z0-9_$-]|\.|\[\d+\]|\["(?:[^"\\]|\\.)*"\])+|\(yaml\))(?: \(line (\d+)\))?: (.*)$/s;
const WARNING = /^warning: /;

/**
 * The parts of one message line. `files` are the names a line may start with when it names no
 * document (the inputs and the paths given): anything else before a colon is part of the message.
 */
export function parseProblem(text: string, severity: Problem['severity'], files: ReadonlySet<string> = new Set()): Problem {
  const doc = IN_DOCUMENT.exec(text);
  let file: string | undefined;
  let document: number | undefined;
  let rest = text;
  if (doc) {
    [file, document, rest] = [doc[1], Number(doc[2]), doc[3]];
  } else {
    const colon = text.indexOf(': ');
    if (colon > 0 && files.has(text.slice(0, colon))) [file, rest] = [text.slice(0, colon), text.slice(colon + 2)];
  }
  let path: string | undefined;
  let line: number | undefined;
  const at = doc ? AT_PATH.exec(rest) : undefined;
  if (at && at[1] === 'warning' && at[2] === undefined) {
    [severity, rest] = ['warning', at[3]];
  } else if (at) {
    path = at[1] === '(yaml)' ? undefined : at[1];
    line = at[2] === undefined ? undefined : Number(at[2]);
    rest = at[3];
  }
  if (WARNING.test(rest)) [severity, rest] = ['warning', rest.replace(WARNING, '')];
  return {
    severity,
    ...(file !== undefined && { file }),
    ...(document !== undefined && { document }),
    ...(path !== undefined && { path }),
    ...(line !== undefined && { line }),
    message: rest,
    text,
  };
}

/** A workflow command's message: `%`, CR and LF escaped, as GitHub's runner reads them back. */
export function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value: also `:` and `,`, which end a value. */
export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** `::command key=value,...::message`, properties without a value left out. */
export function workflowCommand(
  command: string,
  properties: Readonly<Record<string, string | number | undefined>>,
  message: string,
): string {
  const props = Object.entries(properties)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${escapeProperty(String(v))}`)
    .join(',');
  return `::${command}${props ? ` ${props}` : ''}::${escapeData(message)}`;
}

export const ANNOTATION_TITLE = 'tidb-gitops';

/** The annotation of a problem: on its file and line, the path (and document, after the first) in front. */
export function annotation(p: Problem): string {
  const where = [p.document !== undefined && p.document > 1 ? `document ${p.document}` : undefined, p.path].filter((w) => w !== undefined);
  const message = p.file === undefined ? p.text : [...where, p.message].join(': ');
  return workflowCommand(p.severity, { file: p.file, line: p.line, title: ANNOTATION_TITLE }, message);
}

/**
 * Collects what a command reports, in order. `text` writes each line as it comes (what the command
 * always printed); `github` writes errors and warnings as workflow commands and the rest as text;
 * `json` writes nothing until {@link Reporter.json}.
 */
export class Reporter {
  readonly errors: Problem[] = [];
  readonly warnings: Problem[] = [];
  readonly notes: string[] = [];

  constructor(
    readonly format: OutputFormat,
    private readonly write: (s: string) => void,
    /** Names that may start a line naming no document: the inputs and the paths given. */
    private readonly files: ReadonlySet<string> = new Set(),
  ) {}

  /** Input problems; a message of several lines is one problem per line. */
  error(message: string): void {
    this.problems(message, 'error');
  }

  warning(message: string): void {
    this.problems(message, 'warning');
  }

  /** A note, or a warning when it reads as one (`file: document N: path: warning: ...`). */
  note(message: string): void {
    if (!message.includes('\n') && parseProblem(message, 'error', this.files).severity === 'warning') {
      this.warning(message);
      return;
    }
    this.notes.push(message);
    if (this.format !== 'json') this.write(`${message}\n`);
  }

  /** A line for people (a summary, what was written): not part of the JSON document. */
  line(text: string): void {
    if (this.format !== 'json') this.write(`${text}\n`);
  }

  /** The JSON document: `fields` first, then every error, warning and note. */
  json(fields: Readonly<Record<string, unknown>>): string {
    return `${JSON.stringify({ ...fields, errors: this.errors, warnings: this.warnings, notes: this.notes }, null, 2)}\n`;
  }

  private problems(message: string, severity: Problem['severity']): void {
    for (const text of message.split('\n')) {
      const p = parseProblem(text, severity, this.files);
      (p.severity === 'error' ? this.errors : this.warnings).push(p);
      if (this.format === 'text') this.write(`${text}\n`);
      else if (this.format === 'github') this.write(`${annotation(p)}\n`);
    }
  }
}
