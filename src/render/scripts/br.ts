/**
 * The script a BR Job's container runs in the BR image (`pingcap/br`, whose binary is `/br`): it finds
 * the run's folder, runs BR with the arguments it is given, and leaves what the run produced (the
 * storage path, BR's backup TS and size, or the error) as the container's termination message, where
 * `kubectl describe`, the Job's Pod and the companion controller read it.
 *
 * Dialect: POSIX sh with `date`, `sed` and `tee` (busybox on Alpine-based BR images, GNU coreutils on the
 * newer ones), as the start scripts.
 */
import { lines, renderScript } from './common';

/** Where the script writes the run's outcome (the container's `terminationMessagePath`). */
export const TERMINATION_LOG = '/dev/termination-log';

/**
 * For a BackupSchedule run. Environment: `JOB_NAME` (the CronJob's Job, `<cronjob>-<minutes since the
 * epoch of the scheduled time>`), `JOB_UID` (the Job's UID, from the label the Job controller puts on
 * its Pods), `BR_CLUSTER`, `NAMESPACE` and `BR_STORAGE`, the storage URL with `<schedule>/{run}` where
 * the run's folder goes. The script's arguments are BR's, with `--storage=@STORAGE@` for the URL.
 *
 * The folder is the schedule's own and the run's own: under `<prefix>/<schedule>/`, named as
 * tidb-operator names a scheduled backup's (pkg/backup/backupschedule/backup_schedule_manager.go,
 * `buildBackup`: `<cluster>-pd.<namespace>-2379-<scheduled time, UTC, 2006-01-02t15-04-05>`), then the
 * first 8 hexadecimal digits of the Job's UID. Two schedules of one minute, or two clusters of one name
 * in two Kubernetes clusters writing to one bucket, never share a folder, and retention removes a
 * folder only when its name carries the UID of the run it records (src/controller/plan/retention.ts).
 */
export function scheduledBackupScript(): string {
  return renderScript([
    lines('set -eu'),
    lines(
      '# The time this run was scheduled for: the CronJob names its Job after it, in minutes.',
      'minutes=${JOB_NAME##*-}',
      'case "$minutes" in',
      "    ''|*[!0-9]*) echo \"not a CronJob's Job: $JOB_NAME\" >&2; exit 1 ;;",
      'esac',
      "# The start of the Job UID: the run's folder is its own.",
      'uid=${JOB_UID:-}',
      'uid=${uid%%-*}',
      'case "$uid" in',
      '    ????????) ;;',
      '    *) echo "the Pod has no batch.kubernetes.io/controller-uid label of its Job" >&2; exit 1 ;;',
      'esac',
      'run="${BR_CLUSTER}-pd.${NAMESPACE}-2379-$(date -u -d "@$((minutes * 60))" +%Y-%m-%dt%H-%M-%S)-${uid}"',
      'storage="${BR_STORAGE%%\\{run\\}*}${run}${BR_STORAGE#*\\{run\\}}"',
    ),
    runBr('backup'),
  ]);
}

/**
 * For a one-shot Backup or Restore, whose Job the companion controller creates once. Environment:
 * `BR_STORAGE`, the storage URL of the backup's folder. The arguments are BR's, with
 * `--storage=@STORAGE@` for the URL, as for a scheduled run.
 */
export function oneShotScript(action: 'backup' | 'restore'): string {
  return renderScript([lines('set -eu', 'storage="$BR_STORAGE"'), runBr(action)]);
}

/**
 * For a `br log` command of a log backup, whose Job the companion controller creates. Environment:
 * `BR_STORAGE`, the task's storage URL, for `br log start` only; a schedule's log backup has `{run}`
 * where each start's own folder goes, `log-<UTC time, 2006-01-02t15-04-05>` (tidb-operator
 * `buildLogBackup`). The outcome goes to the termination message as for a backup: the storage, or
 * BR's error.
 */
export function logCommandScript(): string {
  return renderScript([
    lines(
      'set -eu',
      'storage="${BR_STORAGE:-}"',
      'case "$storage" in',
      "    *'{run}'*)",
      '        run="log-$(date -u +%Y-%m-%dt%H-%M-%S)"',
      '        storage="${storage%%\\{run\\}*}${run}${storage#*\\{run\\}}"',
      '        ;;',
      'esac',
    ),
    runBr('log'),
  ]);
}

/**
 * BR with the storage placeholder replaced, its output kept, and the outcome left for the controller:
 * BackupTS and Size from BR's summary line, which a backup and a restore both print (a restore's
 * BackupTS is the backup's it restored; br/pkg/task/restore.go records both, and the archive size).
 */
function runBr(action: 'backup' | 'restore' | 'log'): string[] {
  return lines(
    'for arg do',
    '    shift',
    '    if [ "$arg" = "--storage=@STORAGE@" ]; then arg="--storage=$storage"; fi',
    '    set -- "$@" "$arg"',
    'done',
    '# What the script says names the storage without its SAS token, which the URL carries for BR.',
    `hide() { sed 's/\\(sas-token=\\)[^&": ]*/\\1REDACTED/g; s/\\([?&]sig=\\)[^&" ]*/\\1REDACTED/g'; }`,
    'shown=$(printf "%s" "$storage" | hide)',
    { backup: 'echo "backing up to $shown"', restore: 'echo "restoring from $shown"', log: 'echo "br $1 $2${storage:+ into $shown}"' }[
      action
    ],
    '# BR logs to the terminal (BR_LOG_TO_TERM); its summary line has the backup TS and size.',
    'work=$(mktemp -d)',
    'rc=0',
    '{ /br "$@" 2>&1 || echo "$?" > "$work/rc"; } | tee "$work/log"',
    'if [ -s "$work/rc" ]; then rc=$(cat "$work/rc"); fi',
    'field() { sed -n "s/.*success summary.*\\[$1=\\([^]]*\\)\\].*/\\1/p" "$work/log" | tail -n 1; }',
    'if [ "$rc" != 0 ]; then',
    '    error=$(grep "^Error: " "$work/log" | tail -n 1 | hide | sed \'s/\\\\/\\\\\\\\/g; s/"/\\\\"/g\' | cut -c 1-2000)',
    `    printf '{"storage":"%s","error":"%s"}\\n' "$shown" "\${error:-br exited with $rc}" > ${TERMINATION_LOG}`,
    '    exit "$rc"',
    'fi',
    `printf '{"storage":"%s","backupTS":"%s","size":"%s"}\\n' "$shown" "$(field BackupTS)" "$(field Size)" > ${TERMINATION_LOG}`,
  );
}
