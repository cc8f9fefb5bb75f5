/**
 * A Changefeed's replica config and sink URI checked per TiCDC release line (src/database/changefeed-config.ts,
 * changefeed-sink.ts, changefeed-fields.ts): fields of other releases named with the release that reads
 * them, typos with a did-you-mean, Go's JSON types, enumerated values, nested paths, sink schemes per
 * release, credentials refused inline, and their redaction from any text. Property tests: any config
 * generated from a release's own fields passes, and redaction never leaves a generated secret behind.
 * The seed is fixed, so a failure repeats.
 */
import fc from 'fast-check';
import {
  cdcLineOf,
  type FieldAt,
  type FieldsAt,
  hideSinkSecrets,
  replicaConfigFieldsAt,
  replicaConfigIssues,
  SINK_CREDENTIAL_FIELDS,
  SINK_CREDENTIAL_PARAMS,
  sinkUriIssues,
} from '../../../src/database/changefeed-config';
import { CDC_LINES, NEW_ARCHITECTURE_LINES } from '../../../src/database/changefeed-fields';

const SEED = 41;
const messages = (issues: readonly { path: string; message: string }[]) => issues.map((i) => `${i.path}: ${i.message}`);

/** Fields (subtrees included) a release reads. */
function countFields(fields: FieldsAt): number {
  return Object.values(fields).reduce((n, f) => {
    if (typeof f.type === 'string') return n + 1;
    return n + 1 + countFields(Array.isArray(f.type) ? f.type[0] : (f.type as FieldsAt));
  }, 0);
}

describe('release lines', () => {
  test.each([
    ['v7.1.6', '7.1'],
    ['v7.1.0', '7.1'],
    ['v7.4.0', '7.1'],
    ['v7.5.0', '7.5'],
    ['v8.0.0', '7.5'],
    ['v8.1.2', '8.1'],
    ['v8.5.1', '8.5'],
    ['v26.3.3', '26.3'],
    ['latest', '26.3'],
    ['nightly', '26.3'],
    ['v6.5.0', '7.1'],
  ])('%s reads as the %s line', (version, line) => {
    expect(cdcLineOf(version)).toBe(line);
  });

  test('field counts per line (subtrees included) are those of the upstream structs at each tag', () => {
    const counts = Object.fromEntries(CDC_LINES.map((l) => [l, countFields(replicaConfigFieldsAt(`v${l}.0`))]));
    expect(counts).toEqual({ '7.1': 152, '7.5': 194, '8.1': 191, '8.5': 192, '26.3': 193 });
    const newer = Object.fromEntries(
      NEW_ARCHITECTURE_LINES.map((l) => [l, countFields(replicaConfigFieldsAt(`v${l}.0`, { newArchitecture: true }))]),
    );
    expect(newer).toEqual({ '8.5': 206, '26.3': 207 });
  });
});

describe('replicaConfigIssues', () => {
  test('a config every line reads passes on each', () => {
    const config = {
      memory_quota: 1073741824,
      case_sensitive: false,
      force_replicate: true,
      filter: { rules: ['app.*', '!app.tmp_*'], ignore_txn_start_ts: [42] },
      sink: {
        protocol: 'Canal-JSON',
        dispatchers: [{ matcher: ['app.*'], partition: 'ts', topic: 'cdc_{schema}_{table}' }],
        kafka_config: { compression: 'zstd', sasl_mechanism: 'SCRAM-SHA-512', partition_num: 6, replication_factor: 3 },
      },
      consistent: { level: 'eventual', storage: 's3://redo/cf1', max_log_size: 64 },
      integrity: { integrity_check_level: 'correctness', corruption_handle_level: 'warn' },
      sync_point_interval: '10m',
      changefeed_error_stuck_duration: 1800000000000,
    };
    for (const line of CDC_LINES) expect(replicaConfigIssues(config, `v${line}.0`, { sinkScheme: 'kafka' })).toEqual([]);
    expect(replicaConfigIssues(config, 'v8.5.7', { newArchitecture: true })).toEqual([]);
  });

  test('a field only newer lines read is refused on v7.1 with the release that reads it', () => {
    const config = {
      enable_table_monitor: true,
      sink: { pulsar_config: { 'pulsar-version': 'v2' }, debezium: { output_old_value: true } },
    };
    expect(messages(replicaConfigIssues(config, 'v7.1.6'))).toEqual([
      "spec.replicaConfig.enable_table_monitor: `enable_table_monitor` is read from TiCDC v8.1; this cluster's TiCDC is v7.1.6",
      "spec.replicaConfig.sink.pulsar_config: `pulsar_config` is read from TiCDC v7.5; this cluster's TiCDC is v7.1.6",
      "spec.replicaConfig.sink.debezium: `debezium` is read from TiCDC v8.1; this cluster's TiCDC is v7.1.6",
    ]);
    expect(replicaConfigIssues(config, 'v8.1.0')).toEqual([]);
  });

  test('a field older lines read is refused on newer ones, with its new name when it was renamed', () => {
    const config = { enable_old_value: true, filter: { do_dbs: ['app'] }, sink: { file_index_digit: 4 } };
    expect(replicaConfigIssues(config, 'v7.1.6')).toEqual([]);
    expect(messages(replicaConfigIssues(config, 'v8.5.1'))).toEqual([
      "spec.replicaConfig.enable_old_value: `enable_old_value` is not read since TiCDC v7.5; this cluster's TiCDC is v8.5.1",
      "spec.replicaConfig.filter.do_dbs: `do_dbs` is not read since TiCDC v8.1; this cluster's TiCDC is v8.5.1",
      "spec.replicaConfig.sink.file_index_digit: `file_index_digit` is not read since TiCDC v7.5 (it is `file_index_width` since); this cluster's TiCDC is v8.5.1",
    ]);
  });

  test('fields of one architecture only are named as such', () => {
    const scheduler = { scheduler: { region_count_per_span: 100 } };
    expect(replicaConfigIssues(scheduler, 'v8.5.5', { newArchitecture: true })).toEqual([]);
    expect(messages(replicaConfigIssues(scheduler, 'v8.5.5'))).toEqual([
      "spec.replicaConfig.scheduler.region_count_per_span: `region_count_per_span` is read only by TiCDC's new architecture; this cluster's TiCDC is v8.5.5",
    ]);
    const activeActive = { enable_active_active: true };
    expect(messages(replicaConfigIssues(activeActive, 'v8.5.5', { newArchitecture: true }))).toEqual([
      "spec.replicaConfig.enable_active_active: `enable_active_active` is read from TiCDC v26.3; this cluster's TiCDC is v8.5.5 (new architecture)",
    ]);
    expect(replicaConfigIssues(activeActive, 'v26.3.4', { newArchitecture: true })).toEqual([]);
    // The CSV field header came to the new architecture first.
    expect(replicaConfigIssues({ sink: { csv: { output_field_header: true } } }, 'v8.5.7', { newArchitecture: true })).toEqual([]);
    expect(replicaConfigIssues({ sink: { csv: { output_field_header: true } } }, 'v8.5.7')).toHaveLength(1);
  });

  test('typos get a did-you-mean from the fields this release reads', () => {
    expect(messages(replicaConfigIssues({ memory_qouta: 1, sink: { protocl: 'avro' }, Case_Sensitive: true }, 'v8.5.1'))).toEqual([
      'spec.replicaConfig.memory_qouta: unknown field `memory_qouta`; did you mean `memory_quota`?',
      'spec.replicaConfig.sink.protocl: unknown field `protocl`; did you mean `protocol`?',
      'spec.replicaConfig.Case_Sensitive: unknown field `Case_Sensitive`; did you mean `case_sensitive`?',
    ]);
    expect(messages(replicaConfigIssues({ zzz: 1 }, 'v8.5.1'))).toEqual(['spec.replicaConfig.zzz: unknown field `zzz`']);
  });

  test("wrong types, as Go's JSON decoding refuses them", () => {
    const config = {
      memory_quota: '1GiB',
      force_replicate: 'yes',
      mounter: { worker_num: 1.5 },
      sink: { kafka_config: { replication_factor: 40000, partition_num: -1 }, advance_timeout: -5 },
      filter: { rules: ['a.*', 3], event_filters: { matcher: [] } },
      sync_point_interval: '10 minutes',
      scheduler: [],
    };
    expect(messages(replicaConfigIssues(config, 'v8.5.1'))).toEqual([
      'spec.replicaConfig.memory_quota: expected an integer of at least 0, got the string "1GiB"',
      'spec.replicaConfig.force_replicate: expected a boolean (true or false), got the string "yes"',
      'spec.replicaConfig.mounter.worker_num: expected an integer, got 1.5',
      'spec.replicaConfig.sink.kafka_config.replication_factor: expected an integer from -32768 to 32767, got 40000',
      'spec.replicaConfig.sink.advance_timeout: expected an integer of at least 0, got -5',
      'spec.replicaConfig.filter.rules[1]: expected a string, got 3',
      'spec.replicaConfig.filter.event_filters: expected a list of mappings, got a mapping',
      'spec.replicaConfig.sync_point_interval: expected a duration such as "10m" or "1h30m" (or a number of nanoseconds), got the string "10 minutes"',
      'spec.replicaConfig.scheduler: expected a mapping, got a list',
    ]);
    expect(messages(replicaConfigIssues('sink: {}', 'v8.5.1'))).toEqual([
      'spec.replicaConfig: expected a mapping, got the string "sink: {}"',
    ]);
  });

  test('values outside an enumeration list the allowed ones; case counts where TiCDC compares exactly', () => {
    const config = {
      sink: {
        protocol: 'canal_json',
        dispatchers: [
          { matcher: ['a.*'], partition: 'ts' },
          { matcher: ['b.*'], partition: 'index_value' },
        ],
      },
      consistent: { level: 'Eventual' },
      integrity: { integrity_check_level: 'full' },
    };
    expect(messages(replicaConfigIssues(config, 'v8.5.1'))).toEqual([
      'spec.replicaConfig.sink.protocol: "canal_json" is not one of "default", "canal", "avro", "flat-avro", "maxwell", "canal-json", "craft", "open-protocol", "csv", "simple", "debezium"; did you mean "canal-json"?',
      'spec.replicaConfig.sink.dispatchers[1].partition: "index_value" is not one of "default", "ts", "table", "index-value", "rowid", "columns"; did you mean "index-value"?',
      'spec.replicaConfig.consistent.level: "Eventual" is not one of "none", "eventual"; did you mean "eventual"?',
      'spec.replicaConfig.integrity.integrity_check_level: "full" is not one of "none", "correctness"',
    ]);
  });

  test('values of later releases name the release', () => {
    const config = {
      sink: {
        protocol: 'simple',
        dispatchers: [{ partition: 'columns' }],
        kafka_config: { large_message_handle: { large_message_handle_option: 'claim-check' } },
      },
    };
    expect(messages(replicaConfigIssues(config, 'v7.1.6'))).toEqual([
      'spec.replicaConfig.sink.protocol: "simple" is read from TiCDC v7.5; this cluster\'s TiCDC is v7.1.6',
      'spec.replicaConfig.sink.dispatchers[0].partition: "columns" is read from TiCDC v7.5; this cluster\'s TiCDC is v7.1.6',
      'spec.replicaConfig.sink.kafka_config.large_message_handle.large_message_handle_option: "claim-check" is read from TiCDC v7.5; this cluster\'s TiCDC is v7.1.6',
    ]);
    expect(replicaConfigIssues({ sink: { protocol: 'debezium-avro' } }, 'v26.3.4', { newArchitecture: true })).toEqual([]);
    expect(messages(replicaConfigIssues({ sink: { protocol: 'debezium-avro' } }, 'v26.3.3'))).toEqual([
      'spec.replicaConfig.sink.protocol: "debezium-avro" is read from TiCDC v26.3 (new architecture); this cluster\'s TiCDC is v26.3.3',
    ]);
  });

  test('with a Pulsar sink a partition rule may be a key; with a Kafka sink the topic must be an expression', () => {
    const config = { sink: { dispatchers: [{ matcher: ['a.*'], partition: 'order_id', topic: 'cdc/{schema}' }] } };
    expect(replicaConfigIssues(config, 'v8.5.1', { sinkScheme: 'pulsar+ssl' })).toEqual([]);
    expect(messages(replicaConfigIssues(config, 'v8.5.1', { sinkScheme: 'kafka', path: 'spec.config' }))).toEqual([
      'spec.config.sink.dispatchers[0].partition: "order_id" is not one of "default", "ts", "table", "index-value", "rowid", "columns"',
      "spec.config.sink.dispatchers[0].topic: \"cdc/{schema}\" is no Kafka topic expression: letters, digits, '.', '_' and '-', with at most one {schema} and then one {table}",
    ]);
  });

  test('credentials in the config are refused, pointing to spec.sinkCredentials; empty ones are not', () => {
    const config = {
      sink: {
        kafka_config: { sasl_user: 'cdc', sasl_password: 'hunter2', sasl_oauth_client_secret: '' },
        pulsar_config: { 'authentication-token': 'eyJ' },
      },
    };
    const issues = replicaConfigIssues(config, 'v8.5.1');
    expect(issues.map((i) => i.path)).toEqual([
      'spec.replicaConfig.sink.kafka_config.sasl_password',
      'spec.replicaConfig.sink.pulsar_config.authentication-token',
    ]);
    for (const i of issues) {
      expect(i.message).toContain('`spec.sinkCredentials`');
      expect(i.message).not.toMatch(/hunter2|eyJ/);
    }
  });

  test('storage URIs: the redo log schemes, and no credential inline', () => {
    const config = {
      consistent: { storage: 's4://redo/x?access-key=AK&Secret_Access_Key=SK' },
      sink: { kafka_config: { large_message_handle: { claim_check_storage_uri: 'azure://c/p?sas-token=sv%3D1' } } },
    };
    expect(messages(replicaConfigIssues(config, 'v8.5.1'))).toEqual([
      'spec.replicaConfig.consistent.storage: "s4" is no redo log storage: one of local, nfs, s3, gcs, gs, azblob, azure, file, noop, blackhole; did you mean "s3"?',
      "spec.replicaConfig.consistent.storage: `access-key` is a credential: keep it out of the document (it is kept in Git); TiCDC reads the storage's credentials from its pods' environment or cloud identity too",
      "spec.replicaConfig.consistent.storage: `Secret_Access_Key` is a credential: keep it out of the document (it is kept in Git); TiCDC reads the storage's credentials from its pods' environment or cloud identity too",
      "spec.replicaConfig.sink.kafka_config.large_message_handle.claim_check_storage_uri: `sas-token` is a credential: keep it out of the document (it is kept in Git); TiCDC reads the storage's credentials from its pods' environment or cloud identity too",
    ]);
    expect(replicaConfigIssues({ consistent: { storage: 'nfs:///mnt/redo' } }, 'v7.1.6')).toEqual([]);
    expect(replicaConfigIssues({ consistent: { storage: 'blackhole://' } }, 'v7.1.6')).toEqual([]);
  });

  test('null leaves the default, and no config is no issue', () => {
    expect(replicaConfigIssues({ sink: null, memory_quota: null }, 'v7.1.6')).toEqual([]);
    expect(replicaConfigIssues(undefined, 'v7.1.6')).toEqual([]);
  });
});

describe('sinkUriIssues', () => {
  test.each([
    'mysql://cdc@tidb-downstream:4000/?worker-count=16',
    'tidb+ssl://cdc@tidb:4000/',
    'kafka://10.0.0.1:9092,10.0.0.2:9092/cdc-topic?protocol=canal-json&sasl-user=cdc&sasl-mechanism=plain',
    'pulsar+ssl://pulsar:6651/persistent/public/default/cdc',
    's3://bucket/prefix?region=us-east-1',
    'gs://bucket/prefix',
    'azblob://container/prefix?account-name=acct',
    'file:///tmp/cdc',
    'blackhole://',
    'KAFKA://broker:9092/t',
  ])('%s is taken', (uri) => {
    expect(sinkUriIssues(uri, { version: 'v8.5.1' })).toEqual([]);
  });

  test('not a URI, no string, unknown schemes with a did-you-mean', () => {
    expect(messages(sinkUriIssues('just some words'))).toEqual([
      'spec.sinkURI: not a URI: expected scheme://host/..., such as kafka://broker:9092/topic or mysql://user@tidb:4000/',
    ]);
    expect(messages(sinkUriIssues(42, { path: 'spec.sink' }))).toEqual([
      'spec.sink: expected a sink URI such as kafka://broker:9092/topic or mysql://user@tidb:4000/, got a number',
    ]);
    expect(messages(sinkUriIssues('kafak://broker:9092/t'))).toEqual(['spec.sinkURI: unknown sink scheme "kafak"; did you mean "kafka"?']);
    expect(messages(sinkUriIssues('postgres://x/'))[0]).toMatch(/unknown sink scheme "postgres"; TiCDC takes mysql, mysql\+ssl, /);
  });

  test('schemes a release does not have name the release that has them', () => {
    expect(messages(sinkUriIssues('pulsar://p:6650/t', { version: 'v7.1.6' }))).toEqual([
      'spec.sinkURI: "pulsar" sinks are read from TiCDC v7.5; this cluster\'s TiCDC is v7.1.6',
    ]);
    expect(messages(sinkUriIssues('pulsar+https://p:443/t', { version: 'v8.1.2' }))).toEqual([
      'spec.sinkURI: "pulsar+https" sinks are read from TiCDC v8.5; this cluster\'s TiCDC is v8.1.2',
    ]);
    expect(sinkUriIssues('pulsar+https://p:443/t', { version: 'latest' })).toEqual([]);
  });

  test('a password in the user info and credential parameters are refused without repeating them', () => {
    const issues = sinkUriIssues(
      'mysql://root:s3cret@tidb:4000/?ssl-ca=/ca.pem&sasl-password=pw1&SASL_GSSAPI_PASSWORD=pw2&access-key=AK&sas-token=tok',
    );
    expect(issues.map((i) => i.message.split(':')[0])).toEqual([
      'the URI carries a password',
      '`sasl-password` is a credential',
      '`SASL_GSSAPI_PASSWORD` is a credential',
      '`access-key` is a credential',
      '`sas-token` is a credential',
    ]);
    for (const i of issues) {
      expect(i.message).toContain('`spec.sinkCredentials`');
      expect(i.message).not.toMatch(/s3cret|pw1|pw2|AK\b|tok\b/);
    }
    // A user without a password is fine: the controller adds the password.
    expect(sinkUriIssues('mysql://root@tidb:4000/')).toEqual([]);
  });
});

describe('credentials per family', () => {
  test('query parameters and replica config fields', () => {
    expect(SINK_CREDENTIAL_PARAMS.kafka).toEqual(['sasl-password', 'sasl-gssapi-password']);
    expect(SINK_CREDENTIAL_PARAMS.s3).toEqual(['access-key', 'secret-access-key', 'session-token']);
    expect(SINK_CREDENTIAL_PARAMS.azure).toEqual(['account-key', 'sas-token', 'encryption-key']);
    expect(SINK_CREDENTIAL_FIELDS.kafka).toEqual([
      'sink.kafka_config.sasl_password',
      'sink.kafka_config.sasl_gssapi_password',
      'sink.kafka_config.sasl_oauth_client_secret',
      'sink.kafka_config.glue_schema_registry_config.secret_access_key',
      'sink.kafka_config.glue_schema_registry_config.token',
    ]);
    expect(SINK_CREDENTIAL_FIELDS.pulsar).toEqual(['sink.pulsar_config.authentication-token', 'sink.pulsar_config.basic-password']);
  });
});

/** Where a generated secret stands in a text. */
type Spot =
  | { kind: 'userinfo'; scheme: string; secret: string }
  | { kind: 'param'; name: string; secret: string }
  | { kind: 'json'; name: string; secret: string };

describe('hideSinkSecrets', () => {
  test('user info passwords, parameters, config fields and SAS signatures in running text', () => {
    const text =
      'failed: dial mysql://root:p%40ss:w@rd@tidb:4000/?x=1 and "kafka://b:9092/t?sasl-user=u&sasl-password=hunter2&protocol=avro" ' +
      '{"sasl_password":"q\\"uoted","basic-password": "bp", "sasl_user":"u"} s3://b/p?Secret_Access_Key=SK&region=r ' +
      'azure://c/p?sas-token=sv=2022&sig=SIG';
    expect(hideSinkSecrets(text)).toBe(
      'failed: dial mysql://root:REDACTED@tidb:4000/?x=1 and "kafka://b:9092/t?sasl-user=u&sasl-password=REDACTED&protocol=avro" ' +
        '{"sasl_password":"REDACTED","basic-password": "REDACTED", "sasl_user":"u"} s3://b/p?Secret_Access_Key=REDACTED&region=r ' +
        'azure://c/p?sas-token=REDACTED&sig=REDACTED',
    );
    expect(hideSinkSecrets('kafka://b:9092/t?protocol=avro user@host')).toBe('kafka://b:9092/t?protocol=avro user@host');
  });

  test('never leaves a generated secret behind', () => {
    const params = [...new Set(Object.values(SINK_CREDENTIAL_PARAMS).flat())];
    const fields = [
      ...new Set(
        Object.values(SINK_CREDENTIAL_FIELDS)
          .flat()
          .map((p) => p.slice(p.lastIndexOf('.') + 1)),
      ),
    ];
    // A secret is marked so that no other part of the text can spell it.
    const secret = fc.string({ minLength: 1, maxLength: 24, unit: 'grapheme' }).map((s) => `ZQX${s}`);
    const filler = fc.stringMatching(/^[a-z0-9 .,:/=-]{0,20}$/);
    const spot: fc.Arbitrary<Spot> = fc.oneof(
      fc.record({ kind: fc.constant('userinfo' as const), scheme: fc.constantFrom('mysql', 'tidb+ssl', 'kafka'), secret }),
      fc.record({
        kind: fc.constant('param' as const),
        name: fc.constantFrom(...params).chain((n) => fc.constantFrom(n, n.toUpperCase(), n.replace(/-/g, '_'))),
        secret,
      }),
      fc.record({ kind: fc.constant('json' as const), name: fc.constantFrom(...fields), secret }),
    );
    const render = (s: Spot): string => {
      const encoded = encodeURIComponent(s.secret);
      if (s.kind === 'userinfo') return `${s.scheme}://user:${encoded}@host:4000/db?a=b`;
      if (s.kind === 'param') return `s3://bucket/p?region=x&${s.name}=${encoded}&z=1`;
      return JSON.stringify({ [s.name]: s.secret, other: 1 });
    };
    fc.assert(
      fc.property(fc.array(fc.tuple(filler, spot), { minLength: 1, maxLength: 4 }), filler, (parts, tail) => {
        const text = parts.map(([f, s]) => `${f} ${render(s)}`).join(' ') + tail;
        const out = hideSinkSecrets(text);
        for (const [, s] of parts) {
          expect(out).not.toContain(encodeURIComponent(s.secret));
          expect(out).not.toContain(JSON.stringify(s.secret).slice(1, -1));
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

/** A value of the field's type, from its enumeration where it has one; no credential. */
function valueOf(field: FieldAt, sinkScheme: string): fc.Arbitrary<unknown> {
  const t = field.type;
  if (field.spec.secret) return fc.constant('');
  if (field.enum) return fc.constantFrom(...field.enum);
  if (field.spec.format === 'redo-storage') return fc.constantFrom('s3://redo/cf', 'nfs:///mnt/redo', 'blackhole://', 'local:///data');
  if (field.spec.format === 'storage') return fc.constantFrom('s3://claim/check', 'gcs://b/p', 'file:///tmp/x');
  if (field.spec.format === 'topic' && sinkScheme === 'kafka') return fc.constantFrom('cdc', 'cdc_{schema}', 'x.{schema}_{table}');
  if (typeof t !== 'string') {
    return Array.isArray(t) ? fc.array(configOf(t[0], sinkScheme), { maxLength: 2 }) : configOf(t as FieldsAt, sinkScheme);
  }
  const leaf: Record<string, () => fc.Arbitrary<unknown>> = {
    boolean: () => fc.boolean(),
    integer: () => fc.integer(),
    uint: () => fc.nat(),
    int16: () => fc.integer({ min: -32768, max: 32767 }),
    int32: () => fc.integer({ min: -2147483648, max: 2147483647 }),
    number: () => fc.double({ noNaN: true, noDefaultInfinity: true }),
    string: () => fc.string({ maxLength: 8 }),
    duration: () => fc.oneof(fc.constantFrom('10m', '1h30m', '0', '1.5s', '250ms'), fc.nat()),
    'string[]': () => fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    'integer[]': () => fc.array(fc.integer(), { maxLength: 3 }),
    'uint[]': () => fc.array(fc.nat(), { maxLength: 3 }),
  };
  return leaf[t]();
}

function configOf(fields: FieldsAt, sinkScheme: string): fc.Arbitrary<Record<string, unknown>> {
  const model = Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, valueOf(f, sinkScheme)]));
  return fc.record(model, { requiredKeys: [] });
}

describe('generated configs', () => {
  const cases = [
    ...CDC_LINES.map((l) => ({ version: `v${l}.1`, newArchitecture: false })),
    ...NEW_ARCHITECTURE_LINES.map((l) => ({ version: `v${l}.2`, newArchitecture: true })),
  ];
  test.each(cases)(
    'any config of the fields $version reads (new architecture: $newArchitecture) passes',
    ({ version, newArchitecture }) => {
      const fields = replicaConfigFieldsAt(version, { newArchitecture });
      const sinkScheme = fc.constantFrom('kafka', 'pulsar', 'mysql');
      fc.assert(
        fc.property(
          sinkScheme.chain((s) => fc.tuple(fc.constant(s), configOf(fields, s))),
          ([scheme, config]) => {
            expect(replicaConfigIssues(config, version, { newArchitecture, sinkScheme: scheme })).toEqual([]);
          },
        ),
        { seed: SEED, numRuns: 60 },
      );
    },
  );
});
