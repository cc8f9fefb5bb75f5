/**
 * The fields of TiCDC's changefeed `replica_config` (open API v2), per release line, as one tree:
 * JSON name → type, with the first line that reads each field (`since`), the line that no longer does
 * (`until`), and the values a field takes where TiCDC enumerates them. Read from, per line, its newest
 * patch tag:
 *
 * - pingcap/tiflow `cdc/api/v2/model.go` `ReplicaConfig` and the structs it nests: v7.1.6, v7.5.7, v8.1.2,
 *   v8.5.7, v26.3.3 (the classic architecture).
 * - pingcap/ticdc `api/v2/model.go`: v8.5.7 and v26.3.4 (the new architecture).
 * - Enumerations: pingcap/tiflow `pkg/config/sink_protocol.go` `ParseSinkProtocolFromString` (protocols,
 *   any case; `debezium-avro` only in pingcap/ticdc v26.3.4), `pkg/config/sink.go` (transaction atomicity,
 *   CSV binary encoding, date separator, Pulsar compression), `cdc/sink/dmlsink/mq/dispatcher/event_router.go`
 *   `getPartitionDispatcher` (partition rules, any case; pingcap/ticdc
 *   `downstreamadapter/sink/eventrouter/partition/generator.go`), `pkg/sink/kafka/sarama.go` (Kafka
 *   compression), `pkg/security/sasl.go` (SASL mechanisms, GSSAPI auth types), `pkg/sink/codec/common/config.go`
 *   (Avro handling modes, encoding formats), `pkg/config/large_message.go` and `pkg/compression` (large
 *   message handling), `pkg/sink/mysql/config.go` (TiDB transaction modes), `pkg/redo/config.go` (consistency
 *   levels and storage schemes), `pkg/config/consistent.go` (redo compression), `pkg/integrity/integrity.go`.
 *
 * TiCDC decodes the posted body over its defaults (`cdc/api/v2/changefeed.go` `createChangefeed`), so a
 * field left out keeps its default, and a field it does not know is dropped without a word: hence these
 * checks. A field with a wrong JSON type fails the whole request.
 */

/** Release lines, oldest first; a version reads what the newest line at or below it reads. */
export const CDC_LINES = ['7.1', '7.5', '8.1', '8.5', '26.3'] as const;
export type CdcLine = (typeof CDC_LINES)[number];
/** The lines with a new-architecture TiCDC (pingcap/ticdc). */
export const NEW_ARCHITECTURE_LINES: readonly CdcLine[] = ['8.5', '26.3'];

/**
 * A value's JSON type as Go decodes it: `uint` is unsigned, `int16` and `int32` are bounded, `integer` is
 * an int64; `duration` is a Go duration string (`10m`, `1h30m`) or a number of nanoseconds.
 */
export type Leaf =
  | 'boolean'
  | 'integer'
  | 'uint'
  | 'int16'
  | 'int32'
  | 'number'
  | 'string'
  | 'duration'
  | 'string[]'
  | 'integer[]'
  | 'uint[]';

/** One allowed value; a pair names the first line that takes it; a triple's `new` means the new architecture only. */
export type EnumValue = string | readonly [string, CdcLine] | readonly [string, CdcLine, 'new'];

/** A field with more than a type. */
export interface FieldSpec {
  /** Its type: a leaf, a subtree (object), or a one-element array holding the subtree of each item. */
  readonly $: Leaf | FieldTree | readonly [FieldTree];
  /** First classic line that reads it. @default '7.1' */
  readonly since?: CdcLine;
  /** First classic line that no longer reads it. @default none */
  readonly until?: CdcLine;
  /** Not read by the classic architecture. @default false */
  readonly classic?: false;
  /**
   * Lines of the new architecture that read it: `[since, until?]`, or false for none.
   * @default the classic lines' answer, on the new architecture's lines
   */
  readonly new?: readonly [CdcLine, CdcLine?] | false;
  /** The values TiCDC takes. @default any */
  readonly enum?: readonly EnumValue[];
  /** Whether TiCDC lower-cases the value before it compares. @default false */
  readonly anyCase?: boolean;
  /** A credential: never in a document, it comes from the Secret. @default false */
  readonly secret?: boolean;
  /** The name it took in the line that stopped reading it. @default none */
  readonly renamed?: string;
  /**
   * A string with a shape: an external storage URI (`redo-storage`: one redo logs can be written to), or
   * a topic expression. @default none
   */
  readonly format?: 'storage' | 'redo-storage' | 'topic';
}

/**
 * Field name → its type, or its spec. A field that names no lines (`since`, `until`, `classic`, `new`) is
 * read wherever its parent is.
 */
export interface FieldTree {
  readonly [name: string]: Leaf | FieldTree | readonly [FieldTree] | FieldSpec;
}

/** `sink.protocol`. */
const PROTOCOLS: readonly EnumValue[] = [
  'default',
  'canal',
  'avro',
  'flat-avro',
  'maxwell',
  'canal-json',
  'craft',
  'open-protocol',
  'csv',
  ['simple', '7.5'],
  ['debezium', '8.1'],
  ['debezium-avro', '26.3', 'new'],
];

/** `sink.dispatchers[].partition`; with a Pulsar sink any other value is a partition key. */
const PARTITIONS: readonly EnumValue[] = ['default', 'ts', 'table', 'index-value', 'rowid', ['columns', '7.5']];

/** The `replica_config` tree. */
export const REPLICA_CONFIG_FIELDS: FieldTree = {
  memory_quota: 'uint',
  case_sensitive: 'boolean',
  enable_old_value: { $: 'boolean', until: '7.5' },
  force_replicate: 'boolean',
  ignore_ineligible_table: 'boolean',
  check_gc_safe_point: 'boolean',
  enable_sync_point: 'boolean',
  bdr_mode: 'boolean',
  sync_point_interval: 'duration',
  sync_point_retention: 'duration',
  filter: {
    do_tables: {
      $: [
        {
          database_name: 'string',
          table_name: 'string',
        },
      ],
      until: '8.1',
    },
    do_dbs: { $: 'string[]', until: '8.1' },
    ignore_tables: {
      $: [
        {
          database_name: 'string',
          table_name: 'string',
        },
      ],
      until: '8.1',
    },
    ignore_dbs: { $: 'string[]', until: '8.1' },
    rules: 'string[]',
    ignore_txn_start_ts: 'uint[]',
    event_filters: [
      {
        matcher: 'string[]',
        ignore_event: 'string[]',
        ignore_sql: 'string[]',
        ignore_insert_value_expr: 'string',
        ignore_update_new_value_expr: 'string',
        ignore_update_old_value_expr: 'string',
        ignore_delete_value_expr: 'string',
      },
    ],
  },
  mounter: {
    worker_num: 'integer',
  },
  sink: {
    protocol: { $: 'string', enum: PROTOCOLS, anyCase: true },
    schema_registry: 'string',
    csv: {
      delimiter: 'string',
      quote: 'string',
      null: 'string',
      include_commit_ts: 'boolean',
      binary_encoding_method: { $: 'string', enum: ['hex', 'base64'] },
      output_old_value: { $: 'boolean', since: '8.1' },
      output_handle_key: { $: 'boolean', since: '8.1' },
      output_field_header: { $: 'boolean', since: '26.3', new: ['8.5'] },
    },
    dispatchers: [
      {
        matcher: 'string[]',
        partition: { $: 'string', enum: PARTITIONS, anyCase: true },
        topic: { $: 'string', format: 'topic' },
        index: { $: 'string', since: '7.5' },
        columns: { $: 'string[]', since: '7.5' },
        'target-schema': { $: 'string', classic: false, new: ['8.5', '26.3'] },
        'target-table': { $: 'string', classic: false, new: ['8.5', '26.3'] },
      },
    ],
    column_selectors: [
      {
        matcher: 'string[]',
        columns: 'string[]',
      },
    ],
    transaction_atomicity: { $: 'string', enum: ['', 'none', 'table'] },
    encoder_concurrency: 'integer',
    terminator: 'string',
    date_separator: { $: 'string', enum: ['none', 'year', 'month', 'day'], anyCase: true },
    enable_partition_separator: 'boolean',
    file_index_digit: { $: 'integer', until: '7.5', renamed: 'file_index_width' },
    enable_kafka_sink_v2: 'boolean',
    only_output_updated_columns: 'boolean',
    safe_mode: 'boolean',
    content_compatible: 'boolean',
    kafka_config: {
      partition_num: 'int32',
      replication_factor: 'int16',
      kafka_version: 'string',
      max_message_bytes: 'integer',
      compression: { $: 'string', enum: ['', 'none', 'gzip', 'snappy', 'lz4', 'zstd'], anyCase: true },
      kafka_client_id: 'string',
      auto_create_topic: 'boolean',
      dial_timeout: 'string',
      write_timeout: 'string',
      read_timeout: 'string',
      required_acks: 'integer',
      sasl_user: 'string',
      sasl_password: { $: 'string', secret: true },
      sasl_mechanism: { $: 'string', enum: ['plain', 'scram-sha-256', 'scram-sha-512', 'gssapi', 'oauthbearer'], anyCase: true },
      sasl_gssapi_auth_type: { $: 'string', enum: ['user', 'keytab'], anyCase: true },
      sasl_gssapi_keytab_path: 'string',
      sasl_gssapi_kerberos_config_path: 'string',
      sasl_gssapi_service_name: 'string',
      sasl_gssapi_user: 'string',
      sasl_gssapi_password: { $: 'string', secret: true },
      sasl_gssapi_realm: 'string',
      sasl_gssapi_disable_pafxfast: 'boolean',
      sasl_oauth_client_id: 'string',
      sasl_oauth_client_secret: { $: 'string', secret: true },
      sasl_oauth_token_url: 'string',
      sasl_oauth_scopes: 'string[]',
      sasl_oauth_grant_type: 'string',
      sasl_oauth_audience: 'string',
      enable_tls: 'boolean',
      ca: 'string',
      cert: 'string',
      key: 'string',
      insecure_skip_verify: 'boolean',
      codec_config: {
        enable_tidb_extension: 'boolean',
        max_batch_size: 'integer',
        avro_enable_watermark: 'boolean',
        avro_decimal_handling_mode: { $: 'string', enum: ['string', 'precise'] },
        avro_bigint_unsigned_handling_mode: { $: 'string', enum: ['string', 'long'] },
        encoding_format: { $: 'string', since: '7.5', enum: ['json', 'avro'] },
      },
      large_message_handle: {
        large_message_handle_option: { $: 'string', enum: ['none', 'handle-key-only', ['claim-check', '7.5']] },
        large_message_handle_compression: { $: 'string', since: '7.5', enum: ['', 'none', 'snappy', 'lz4'] },
        claim_check_storage_uri: { $: 'string', since: '7.5', format: 'storage' },
        claim_check_raw_value: { $: 'boolean', since: '8.5' },
      },
      output_raw_change_event: 'boolean',
      glue_schema_registry_config: {
        $: {
          registry_name: 'string',
          region: 'string',
          access_key: 'string',
          secret_access_key: { $: 'string', secret: true },
          token: { $: 'string', secret: true },
        },
        since: '7.5',
      },
    },
    mysql_config: {
      worker_count: 'integer',
      max_txn_row: 'integer',
      max_multi_update_row_size: 'integer',
      max_multi_update_row_count: 'integer',
      tidb_txn_mode: { $: 'string', enum: ['', 'optimistic', 'pessimistic'] },
      ssl_ca: 'string',
      ssl_cert: 'string',
      ssl_key: 'string',
      time_zone: 'string',
      write_timeout: 'string',
      read_timeout: 'string',
      timeout: 'string',
      enable_batch_dml: 'boolean',
      enable_multi_statement: 'boolean',
      enable_cache_prepared_statement: 'boolean',
    },
    cloud_storage_config: {
      worker_count: 'integer',
      flush_interval: 'string',
      file_size: 'integer',
      output_column_id: 'boolean',
      file_expiration_days: 'integer',
      file_cleanup_cron_spec: 'string',
      flush_concurrency: 'integer',
      output_raw_change_event: 'boolean',
      spool_disk_quota: { $: 'integer', classic: false, new: ['8.5'] },
      spool_base_dir: { $: 'string', classic: false, new: ['8.5'] },
      use_table_id_as_path: { $: 'boolean', classic: false, new: ['8.5'] },
    },
    advance_timeout: 'uint',
    file_index_width: { $: 'integer', since: '7.5' },
    delete_only_output_handle_key_columns: { $: 'boolean', since: '7.5' },
    pulsar_config: {
      $: {
        'tls-certificate-path': 'string',
        'tls-private-key-path': 'string',
        'tls-trust-certs-file-path': 'string',
        'pulsar-producer-cache-size': 'int32',
        'pulsar-version': 'string',
        'compression-type': { $: 'string', enum: ['', 'none', 'lz4', 'zlib', 'zstd'], anyCase: true },
        'authentication-token': { $: 'string', secret: true },
        'connection-timeout': 'integer',
        'operation-timeout': 'integer',
        'batching-max-messages': 'uint',
        'batching-max-publish-delay': 'integer',
        'send-timeout': 'integer',
        'token-from-file': 'string',
        'basic-user-name': 'string',
        'basic-password': { $: 'string', secret: true },
        'auth-tls-certificate-path': 'string',
        'auth-tls-private-key-path': 'string',
        oauth2: {
          'oauth2-issuer-url': 'string',
          'oauth2-audience': 'string',
          'oauth2-private-key': 'string',
          'oauth2-client-id': 'string',
          'oauth2-scope': 'string',
        },
        'output-raw-change-event': 'boolean',
      },
      since: '7.5',
    },
    send_bootstrap_interval_in_sec: { $: 'integer', since: '7.5' },
    send_bootstrap_in_msg_count: { $: 'int32', since: '7.5' },
    send_bootstrap_to_all_partition: { $: 'boolean', since: '7.5' },
    'send-all-bootstrap-at-start': { $: 'boolean', since: '7.5' },
    open: {
      $: {
        output_old_value: 'boolean',
      },
      since: '7.5',
    },
    debezium_disable_schema: { $: 'boolean', since: '8.1' },
    debezium: {
      $: {
        output_old_value: 'boolean',
      },
      since: '8.1',
    },
  },
  consistent: {
    level: { $: 'string', enum: ['none', 'eventual'] },
    max_log_size: 'integer',
    flush_interval: 'integer',
    meta_flush_interval: 'integer',
    encoding_worker_num: 'integer',
    flush_worker_num: 'integer',
    storage: { $: 'string', format: 'redo-storage' },
    use_file_backend: 'boolean',
    compression: { $: 'string', enum: ['', 'none', 'lz4'] },
    flush_concurrency: 'integer',
    memory_usage: {
      memory_quota_percentage: 'uint',
      event_cache_percentage: { $: 'uint', until: '8.1' },
    },
  },
  scheduler: {
    enable_table_across_nodes: 'boolean',
    region_threshold: 'integer',
    write_key_threshold: 'integer',
    region_count_per_span: { $: 'integer', classic: false, new: ['8.5'] },
    region_count_refresh_interval: { $: 'integer', classic: false, new: ['8.5'] },
    scheduling_task_count_per_node: { $: 'integer', classic: false, new: ['8.5'] },
    enable_splittable_check: { $: 'boolean', classic: false, new: ['8.5'] },
    force_split: { $: 'boolean', classic: false, new: ['8.5'] },
    balance_score_threshold: { $: 'integer', classic: false, new: ['8.5'] },
    min_traffic_percentage: { $: 'number', classic: false, new: ['8.5'] },
    max_traffic_percentage: { $: 'number', classic: false, new: ['8.5'] },
  },
  integrity: {
    integrity_check_level: { $: 'string', enum: ['none', 'correctness'] },
    corruption_handle_level: { $: 'string', enum: ['warn', 'error'] },
  },
  changefeed_error_stuck_duration: 'duration',
  sql_mode: 'string',
  synced_status: {
    synced_check_interval: 'integer',
    checkpoint_interval: 'integer',
  },
  enable_table_monitor: { $: 'boolean', since: '8.1' },
  enable_active_active: { $: 'boolean', classic: false, new: ['26.3'] },
  active_active_progress_interval: { $: 'duration', classic: false, new: ['26.3'] },
  active_active_sync_stats_interval: { $: 'duration', classic: false, new: ['26.3'] },
};
