/**
 * A TiDB of a given release on the MySQL protocol, as far as resource groups go: CREATE / ALTER /
 * DROP RESOURCE GROUP with the release's grammar (tidb-rg-grammar.ts) and TiDB's checks and errors,
 * `information_schema.resource_groups` with the release's columns and value formats, the version and
 * the default sql_mode, FLUSH PRIVILEGES. Every other statement is recorded and refused with ERR 1105
 * `statement not simulated: …`, so a test sees what it did not expect.
 *
 * Sources (pingcap/tidb): pkg/ddl/executor.go `AddResourceGroup` / `AlterResourceGroup` /
 * `DropResourceGroup` (order of checks), pkg/ddl/resource_group.go `buildResourceGroup` /
 * `SetDirectResourceGroupSettings` (ALTER keeps what it does not name), pkg/meta/model/resource_group.go
 * `Adjust`, pkg/ddl/resourcegroup/group.go `NewGroupFromOptions` (validation) and errors.go (texts),
 * pkg/executor/infoschema_reader.go `setDataFromResourceGroups` (row formats), pkg/infoschema/tables.go
 * `tableResourceGroupsCols`, pkg/errno (8248-8250), pkg/parser/mysql/const.go (version, sql_mode).
 * Which release has what: `TidbRelease` and `RgGrammar`, each flag with its source.
 */
import { MysqlWireServer, type WireAnswer, type WireError } from './mysql-wire';
import {
  goDuration,
  parseResourceGroupStatement,
  RgSyntaxError,
  type Background,
  type RgGrammar,
  type RgOption,
  type Runaway,
} from './tidb-rg-grammar';

export interface TidbSqlSimOptions {
  /** The TiDB release, `v8.5.1`; v7.0 and later. v9 and later take the grammar and formats of pingcap/tidb master (after v8.5). */
  readonly version: string;
  /** root's password. @default '' (TiDB's initial state) */
  readonly rootPassword?: string;
  /** `tidb_enable_resource_control` at start. @default true (ON by default since v7.0) */
  readonly resourceControl?: boolean;
  /** The address to listen on (a TiDB Pod's, in a test of the controller). @default '127.0.0.1' */
  readonly host?: string;
  /** The port to listen on (4000 at a Pod's address). @default 0: a free one */
  readonly port?: number;
}

/** A group as `information_schema.resource_groups` shows it on this release. */
export interface SimGroupRow {
  readonly name: string;
  readonly ruPerSec: string;
  readonly priority: string;
  readonly burstable: string;
  /** null where the release has no QUERY_LIMIT column, or the group no limit. */
  readonly queryLimit: string | null;
  readonly background: string | null;
}

interface Settings {
  ruRate: number;
  priority: number;
  /** -1 burst without limit, -2 moderated (master), otherwise equal to ruRate (`Adjust`). */
  burstLimit: number;
  runaway?: Runaway;
  background?: Background;
}

/** math.MaxInt32: the fill rate of `RU_PER_SEC = UNLIMITED` and of the `default` group (pkg/ddl/resource_group.go `unlimitedRURate`). */
const UNLIMITED_RU = 2147483647;
/** pkg/ddl/resourcegroup/group.go `MaxGroupNameLength`. */
const MAX_NAME_BYTES = 32;
/** pkg/parser/mysql/const.go `DefaultSQLMode`. */
export const TIDB_DEFAULT_SQL_MODE =
  'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION';
const PRIORITY_NAMES: Record<number, string> = { 1: 'LOW', 8: 'MEDIUM', 16: 'HIGH' };

/** An error as the server sends it. */
class SqlError extends Error {
  constructor(readonly wire: WireError) {
    super(wire.message);
  }
}

/** A plain Go error (`errors.New`): the server sends it as ErrUnknown, 1105 HY000. */
const plain = (message: string) => new SqlError({ code: 1105, sqlState: 'HY000', message });

/** What a release has, from its major and minor numbers. */
export class TidbRelease {
  readonly major: number;
  readonly minor: number;
  readonly patch: string;
  readonly grammar: RgGrammar;

  constructor(readonly version: string) {
    const m = /^v?(\d+)\.(\d+)\.(\d+.*)$/.exec(version);
    if (!m) throw new Error(`not a TiDB version: ${version}`);
    this.major = Number(m[1]);
    this.minor = Number(m[2]);
    this.patch = m[3];
    if (!this.atLeast(7, 0)) throw new Error(`TiDB ${version}: resource groups before v7.0 are not simulated`);
    this.grammar = {
      queryLimit: this.atLeast(7, 2),
      watchPlan: this.atLeast(7, 3),
      burstableBool: this.atLeast(7, 2) && !this.master,
      burstableModes: this.master,
      runawayV84: this.atLeast(8, 4),
      background: this.atLeast(7, 4),
      defaultName: this.atLeast(7, 5),
    };
  }

  atLeast(major: number, minor: number): boolean {
    return this.major > major || (this.major === major && this.minor >= minor);
  }

  /** The post-v8.5 line (pingcap/tidb master): BURSTABLE modes, RU_PER_SEC = UNLIMITED, OFF/MODERATED/UNLIMITED in the table. */
  get master(): boolean {
    return this.major >= 9;
  }

  /** `<MySQL compatibility version>-TiDB-<release>`: 8.0.11 from v7.4 on (pkg/parser/mysql/const.go), 5.7.25 before. */
  get serverVersion(): string {
    return `${this.atLeast(7, 4) ? '8.0.11' : '5.7.25'}-TiDB-${this.version.startsWith('v') ? this.version : `v${this.version}`}`;
  }

  /** `tableResourceGroupsCols`: QUERY_LIMIT came with runaway queries (v7.2), BACKGROUND with background tasks (v7.4). */
  get columns(): string[] {
    return [
      'NAME',
      'RU_PER_SEC',
      'PRIORITY',
      'BURSTABLE',
      ...(this.atLeast(7, 2) ? ['QUERY_LIMIT'] : []),
      ...(this.atLeast(7, 4) ? ['BACKGROUND'] : []),
    ];
  }
}

/** The TiDB server: start() it, connect with any MySQL client as root. */
export class TidbSqlSim {
  /** Every query received, in order, as sent. */
  readonly statements: string[] = [];
  readonly release: TidbRelease;
  /** `tidb_enable_resource_control`; `SET GLOBAL tidb_enable_resource_control = …` changes it too. */
  resourceControl: boolean;
  private readonly store = new Map<string, Settings>();
  private readonly wire: MysqlWireServer;
  private readonly host: string;
  private readonly port: number;

  constructor(options: TidbSqlSimOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port ?? 0;
    this.release = new TidbRelease(options.version);
    this.resourceControl = options.resourceControl ?? true;
    // The `default` group TiDB creates at bootstrap: unlimited RU, MEDIUM, burstable without limit
    // (information_schema: UNLIMITED / MEDIUM / YES, and BURSTABLE UNLIMITED on master).
    this.store.set('default', { ruRate: UNLIMITED_RU, priority: 8, burstLimit: -1 });
    this.wire = new MysqlWireServer({
      serverVersion: this.release.serverVersion,
      rootPassword: options.rootPassword ?? '',
      query: (sql) => {
        this.statements.push(sql);
        return this.answer(sql, false);
      },
    });
  }

  get serverVersion(): string {
    return this.release.serverVersion;
  }

  /** Listens on `host` and `port` (options); returns the port. */
  start(): Promise<number> {
    return this.wire.start(this.host, this.port);
  }

  stop(): Promise<void> {
    return this.wire.stop();
  }

  /** The groups as `SELECT * FROM information_schema.resource_groups` would show them, by name. */
  groups(): SimGroupRow[] {
    return [...this.store.keys()].sort().map((name) => this.row(name));
  }

  /**
   * Changes a group behind the controller's back, as someone with a SQL client would: `options` in
   * the release's grammar (`RU_PER_SEC = 50, PRIORITY = HIGH`). Not recorded in `statements`; throws
   * TiDB's error text when TiDB would refuse.
   */
  alterByHand(name: string, options: string): void {
    this.byHand(`ALTER RESOURCE GROUP \`${name}\` ${options}`);
  }

  /** Creates a group by hand (`options` as in alterByHand). */
  createByHand(name: string, options: string): void {
    this.byHand(`CREATE RESOURCE GROUP \`${name}\` ${options}`);
  }

  /** Drops a group by hand. */
  dropByHand(name: string): void {
    this.byHand(`DROP RESOURCE GROUP \`${name}\``);
  }

  private byHand(sql: string): void {
    const a = this.answer(sql, true);
    if ('error' in a) throw new Error(`${a.error.code}: ${a.error.message}`);
  }

  private answer(sql: string, byHand: boolean): WireAnswer {
    try {
      return this.execute(sql.trim(), byHand);
    } catch (e) {
      if (e instanceof SqlError) return { error: e.wire };
      if (e instanceof RgSyntaxError) return { error: { code: 1064, sqlState: '42000', message: e.message } };
      throw e;
    }
  }

  private execute(sql: string, byHand: boolean): WireAnswer {
    const text = sql.replace(/;\s*$/, '');
    const one = (column: string, value: string): WireAnswer => ({ columns: [column], rows: [[value]] });
    let m: RegExpExecArray | null;
    if ((m = /^SELECT\s+(VERSION\(\s*\)|@@(?:(?:SESSION|GLOBAL)\.)?version)$/i.exec(text))) return one(m[1], this.serverVersion);
    if ((m = /^SELECT\s+(@@(?:(?:SESSION|GLOBAL)\.)?sql_mode)$/i.exec(text))) return one(m[1], TIDB_DEFAULT_SQL_MODE);
    if ((m = /^SET\s+(?:GLOBAL\s+|@@GLOBAL\.)tidb_enable_resource_control\s*=\s*'?(ON|OFF|1|0)'?$/i.exec(text))) {
      this.resourceControl = /^(ON|1)$/i.test(m[1]);
      return { ok: {} };
    }
    // What an initializer that only checks root's password ends with (pkg/executor/simple.go `executeFlush`): OK, nothing to reload here.
    if (/^FLUSH\s+PRIVILEGES$/i.test(text)) return { ok: {} };
    m =
      /^SELECT\s+(.+?)\s+FROM\s+`?information_schema`?\.`?resource_groups`?(?:\s+WHERE\s+`?NAME`?\s*=\s*'([^']*)')?(?:\s+ORDER\s+BY\s+`?NAME`?)?$/is.exec(
        text,
      );
    if (m) return this.selectGroups(m[1], m[2]);
    const stmt = parseResourceGroupStatement(sql, this.release.grammar);
    if (!stmt) throw plain(`statement not simulated: ${sql}`);
    // pkg/executor/ddl.go `executeCreateResourceGroup` / Alter / Drop: refused while resource control is off.
    if (!this.resourceControl && !byHand)
      throw new SqlError({
        code: 8250,
        sqlState: 'HY000',
        message: "Resource control feature is disabled. Run `SET GLOBAL tidb_enable_resource_control='on'` to enable the feature",
      });
    const key = stmt.name.toLowerCase();
    const old = this.store.get(key);
    if (stmt.kind === 'drop') {
      // pkg/ddl/executor.go `DropResourceGroup`: the reserved group first, even with IF EXISTS.
      if (key === 'default') throw plain("can't drop reserved resource group");
      if (!old) return this.missing(stmt.name, stmt.ifExists);
      this.store.delete(key);
      return { ok: {} };
    }
    if (stmt.kind === 'alter') {
      if (!old) return this.missing(stmt.name, stmt.ifExists);
      const next = this.build(old, stmt.options, key);
      this.validate(key, next);
      this.store.set(key, next);
      return { ok: {} };
    }
    // `AddResourceGroup`: options, then existence (a note with IF NOT EXISTS), then validation.
    const next = this.build({ ruRate: 0, priority: 8, burstLimit: 0 }, stmt.options, key);
    if (old) {
      if (stmt.ifNotExists) return { ok: { warnings: 1 } };
      throw new SqlError({ code: 8248, sqlState: 'HY000', message: `Resource group '${stmt.name}' already exists` });
    }
    this.validate(key, next);
    this.store.set(key, next);
    return { ok: {} };
  }

  /** ErrResourceGroupNotExists (8249), or OK with a note under IF EXISTS. */
  private missing(name: string, ifExists: boolean): WireAnswer {
    if (ifExists) return { ok: { warnings: 1 } };
    throw new SqlError({ code: 8249, sqlState: 'HY000', message: `Unknown resource group '${name}'` });
  }

  /** `buildResourceGroup`: the old settings, each option over them, then `Adjust`. */
  private build(old: Settings, options: RgOption[], key: string): Settings {
    const s: Settings = { ...old, runaway: old.runaway && { ...old.runaway }, background: old.background };
    for (const o of options) {
      if (o.key === 'ru') s.ruRate = o.value === 'UNLIMITED' ? UNLIMITED_RU : o.value;
      else if (o.key === 'priority') s.priority = o.value;
      else if (o.key === 'burstable') s.burstLimit = o.burstLimit;
      else if (o.key === 'queryLimit') s.runaway = o.runaway && { ...o.runaway };
      else {
        if (key !== 'default')
          throw plain('unsupported operation. Currently, only the default resource group support change background settings');
        s.background = o.background;
      }
    }
    // `ResourceGroupSettings.Adjust`: the burst limit follows the rate unless it is negative (burstable).
    if (s.burstLimit >= 0) s.burstLimit = s.ruRate;
    return s;
  }

  /** `NewGroupFromOptions`: name length, the runaway rule and action, then RU mode. */
  private validate(key: string, s: Settings): void {
    if (Buffer.byteLength(key, 'utf8') > MAX_NAME_BYTES) throw plain('resource group name too long');
    const r = s.runaway;
    if (r) {
      if (this.release.master) {
        if (r.execElapsedMs === 0 && r.processedKeys === 0 && r.ru === 0)
          throw plain('please set at least one field(exec_elapsed_time_ms, processed_keys, ru)');
      } else if (r.execElapsedMs === 0) throw plain('invalid exec elapsed time');
      if (!r.action) throw plain('unknown resource group runaway action');
    }
    if (s.ruRate <= 0) throw plain('unknown resource group mode');
  }

  private selectGroups(list: string, where?: string): WireAnswer {
    const all = this.release.columns;
    const asked = list.trim() === '*' ? all : list.split(',').map((c) => c.trim().replace(/^`(.*)`$/, '$1'));
    for (const c of asked)
      if (!all.includes(c.toUpperCase()))
        throw new SqlError({ code: 1054, sqlState: '42S22', message: `Unknown column '${c}' in 'field list'` });
    const rows = this.groups()
      .filter((g) => where === undefined || g.name === where)
      .map((g) => {
        const cells: Record<string, string | null> = {
          NAME: g.name,
          RU_PER_SEC: g.ruPerSec,
          PRIORITY: g.priority,
          BURSTABLE: g.burstable,
          QUERY_LIMIT: g.queryLimit,
          BACKGROUND: g.background,
        };
        return asked.map((c) => cells[c.toUpperCase()]);
      });
    return { columns: asked, rows };
  }

  /** `setDataFromResourceGroups`: one row, in this release's formats. */
  private row(name: string): SimGroupRow {
    const s = this.store.get(name)!;
    const master = this.release.master;
    let burstable: string;
    if (master) burstable = s.burstLimit === -1 ? 'UNLIMITED' : s.burstLimit === -2 ? 'MODERATED' : 'OFF';
    else burstable = s.burstLimit < 0 ? 'YES' : 'NO';
    return {
      name,
      ruPerSec: s.ruRate === UNLIMITED_RU ? 'UNLIMITED' : String(s.ruRate),
      priority: PRIORITY_NAMES[s.priority],
      burstable,
      queryLimit: this.release.grammar.queryLimit && s.runaway ? queryLimit(s.runaway) : null,
      background:
        s.background && (s.background.taskTypes.length > 0 || s.background.utilizationLimit > 0) ? background(s.background) : null,
    };
  }
}

/** QUERY_LIMIT: `EXEC_ELAPSED='1m0s'[, PROCESSED_KEYS=n][, RU=n], ACTION=KILL[, WATCH=SIMILAR DURATION='10m0s' | DURATION=UNLIMITED]`. */
function queryLimit(r: Runaway): string {
  const rules = [
    ...(r.execElapsedMs > 0 ? [`EXEC_ELAPSED='${goDuration(r.execElapsedMs)}'`] : []),
    ...(r.processedKeys > 0 ? [`PROCESSED_KEYS=${r.processedKeys}`] : []),
    ...(r.ru > 0 ? [`RU=${r.ru}`] : []),
  ];
  let text = rules.join(', ');
  if (r.action) text += `, ACTION=${r.action === 'SWITCH_GROUP' ? `SWITCH_GROUP(${r.switchGroup})` : r.action}`;
  if (r.watch)
    text += `, WATCH=${r.watch.type} ${r.watch.durationMs > 0 ? `DURATION='${goDuration(r.watch.durationMs)}'` : 'DURATION=UNLIMITED'}`;
  return text;
}

/** BACKGROUND: `TASK_TYPES='br,lightning'[, UTILIZATION_LIMIT=n]`. */
function background(b: Background): string {
  const parts = [...(b.taskTypes.length > 0 ? [`TASK_TYPES='${b.taskTypes.join(',')}'`] : [])];
  if (b.utilizationLimit > 0) parts.push(`UTILIZATION_LIMIT=${b.utilizationLimit}`);
  return parts.join(', ');
}
