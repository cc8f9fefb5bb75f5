/** Structured logs: one JSON object per line on stderr, as log collectors expect. */

export type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export class Logger {
  constructor(
    private readonly level: Level = 'info',
    private readonly base: Record<string, unknown> = {},
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  /** A logger whose lines all carry `fields`. */
  with(fields: Record<string, unknown>): Logger {
    return new Logger(this.level, { ...this.base, ...fields }, this.write);
  }

  log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
    if (RANK[level] < RANK[this.level]) return;
    this.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...this.base, ...fields })}\n`);
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.log('debug', msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.log('info', msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.log('warn', msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.log('error', msg, fields);
  }
}

export const isLevel = (v: string): v is Level => v in RANK;
