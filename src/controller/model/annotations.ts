/**
 * The Pod and claim annotations the controller reads and writes: tidb-operator's keys where the
 * operator has them (so a migrated cluster keeps its operations' state), its own beside them.
 */
/** PVC annotation (the operator's key): the claim's Pod was scaled in; the claim is kept until the ordinal comes back. */
export const DEFER_DELETING_ANNOTATION = 'tidb.pingcap.com/pvc-defer-deleting';

/** Pod annotation (the operator's key): when the safe scale-in of this Pod began. */
export const SCALE_IN_TIME_ANNOTATION = 'tidb.pingcap.com/scale-in-time';

/** Pod annotation (the operator's key): when a TiCDC capture began to hand its tables over. */
export const TICDC_SHUTDOWN_BEGIN_ANNOTATION = 'tidb.pingcap.com/ticdc-graceful-shutdown-begin-time';

/** Pod annotation: the TiCDC capture or Pump node of this Pod was retired (drained, offline) and may go. */
export const RETIRED_ANNOTATION = 'tidb-gitops.io/retired-at';

/** Pod annotation: when the capture of this TiCDC Pod was drained for its restart in an upgrade. */
export const TICDC_DRAINED_ANNOTATION = 'tidb-gitops.io/ticdc-drained-at';

/** Pod annotation: the update revision for which log backup on this TiKV was asked to flush before its restart. */
export const LOG_BACKUP_FLUSHED_ANNOTATION = 'tidb-gitops.io/log-backup-flushed-for';

/** Pod annotation (the operator's literal key): when leader eviction began for this Pod's upgrade. */
export const EVICT_BEGIN_ANNOTATION = 'evictLeaderBeginTime';

/** Pod annotation (the operator's key): when the upgraded store's evict-leader scheduler was removed. */
export const EVICT_END_ANNOTATION = 'tidb.pingcap.com/tikv-evict-leader-end-at';

/** Pod annotations by which a user asks for leader eviction; the controller leaves such schedulers alone. */
export const USER_EVICT_ANNOTATIONS = ['tidb.pingcap.com/evict-leader', 'tidb.pingcap.com/evict-leader-for-resize'];

/** tidb-operator's Pod-level request: `none` (evict, keep the Pod) or `delete-pod` (evict, then delete it). */
export const EVICT_REQUEST_ANNOTATION = 'tidb.pingcap.com/evict-leader';

/** tidb-operator's PD Pod request: `none` (keep PD leadership off this Pod) or `delete-pod` (then delete it). */
export const PD_TRANSFER_REQUEST_ANNOTATION = 'tidb.pingcap.com/pd-transfer-leader';

/** When a PD transfer request ends by itself (RFC 3339; the operator's key, with "evict" in it). */
export const PD_TRANSFER_EXPIRY_ANNOTATION = 'tidb.pingcap.com/pd-evict-leader-expiration-time';

/** tidb-operator's TiDB Pod request: `delete-pod` deletes the Pod (TiDB shuts down gracefully), `none` nothing. */
export const TIDB_SHUTDOWN_REQUEST_ANNOTATION = 'tidb.pingcap.com/tidb-graceful-shutdown';

/** tidb-operator's Pod request to replace its volumes (`"true"`): for PD, TiKV and TiFlash, as `tidb-gitops.io/replace`. */
export const REPLACE_VOLUME_ANNOTATION = 'tidb.pingcap.com/replace-volume';

/** When a request ends by itself (RFC 3339): the request annotations are then removed. */
export const EVICT_REQUEST_EXPIRY_ANNOTATION = 'tidb.pingcap.com/tikv-evict-leader-expiration-time';

/**
 * The Pod annotations an upgrade or scale-in step writes and reads back. Left on a Pod that did not
 * restart (the operation was taken back in Git), a begin time would cut the next operation's
 * timeout short and a done-mark would skip its step; once the component is idle they go.
 */
export const OPERATION_MARKS = [
  EVICT_BEGIN_ANNOTATION,
  EVICT_END_ANNOTATION,
  SCALE_IN_TIME_ANNOTATION,
  TICDC_SHUTDOWN_BEGIN_ANNOTATION,
  TICDC_DRAINED_ANNOTATION,
  LOG_BACKUP_FLUSHED_ANNOTATION,
];
