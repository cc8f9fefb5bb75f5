/**
 * SQL text split into statements as the `mysql` client splits what it reads: at each `;` outside
 * quotes, back-quoted names and comments. Comments stay in the statement they are in (TiDB reads its
 * `/*T! ... *\/` comments); statements of nothing but comments and spaces are left out. `DELIMITER`
 * and the backslash commands (`\G`, `\g`, `\c`...), commands of the client and not of the server,
 * are refused.
 */

export interface SqlStatement {
  /** The statement, without its `;`. */
  readonly text: string;
  /** The line it starts on, from 1. */
  readonly line: number;
}

export interface SplitSql {
  readonly statements: readonly SqlStatement[];
  /** Why the text cannot be split, with the line. @default none */
  readonly problem?: string;
}

export function splitSql(sql: string): SplitSql {
  const statements: SqlStatement[] = [];
  let start = 0;
  let line = 1;
  let startLine = 1;
  /** Whether the statement under way has something besides comments and spaces. */
  let content = false;
  const push = (end: number) => {
    if (content) statements.push({ text: sql.slice(start, end).trim(), line: startLine });
    content = false;
  };
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (!content && /\s/.test(ch)) {
      if (ch === '\n') line++;
      i++;
      start = i;
      startLine = line;
      continue;
    }
    if (ch === '\n') {
      line++;
      i++;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      const opened = line;
      content = true;
      i++;
      for (;;) {
        if (i >= sql.length)
          return {
            statements,
            problem: `line ${opened}: a ${ch === '`' ? 'back-quoted name' : 'quoted string'} that starts here is never closed`,
          };
        const c = sql[i];
        if (c === '\n') line++;
        if (c === '\\' && ch !== '`') {
          if (sql[i + 1] === '\n') line++;
          i += 2;
          continue;
        }
        if (c === ch) {
          if (sql[i + 1] === ch) {
            i += 2;
            continue;
          }
          i++;
          break;
        }
        i++;
      }
      continue;
    }
    if (ch === '#' || (ch === '-' && sql[i + 1] === '-' && (i + 2 >= sql.length || /\s/.test(sql[i + 2])))) {
      while (i < sql.length && sql[i] !== '\n') i++;
      continue;
    }
    if (ch === '/' && sql[i + 1] === '*') {
      const opened = line;
      // `/*! ... */` and `/*T! ... */` are read by the server: they count as content.
      if (sql[i + 2] === '!' || (sql[i + 2] === 'T' && sql[i + 3] === '!')) content = true;
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return { statements, problem: `line ${opened}: a comment that starts here is never closed` };
      for (let k = i; k < end; k++) if (sql[k] === '\n') line++;
      i = end + 2;
      continue;
    }
    if (ch === ';') {
      push(i);
      i++;
      start = i;
      startLine = line;
      continue;
    }
    if (!content && /^delimiter(\s|;|$)/i.test(sql.slice(i, i + 10))) {
      return { statements, problem: `line ${line}: DELIMITER is a command of the mysql client, not SQL; end each statement with ;` };
    }
    // `\G`, `\g`, `\c` and the like are the client's commands too; `\N` (NULL) is the server's.
    if (ch === '\\' && sql[i + 1] !== 'N') {
      const command = sql[i + 1] === undefined || /\s/.test(sql[i + 1]) ? '\\' : `\\${sql[i + 1]}`;
      return { statements, problem: `line ${line}: ${command} is a command of the mysql client, not SQL; end each statement with ;` };
    }
    content = true;
    i++;
  }
  push(sql.length);
  return { statements };
}
