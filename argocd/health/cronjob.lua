-- Argo CD health check for CronJob (argocd-cm key resource.customizations.health.batch_CronJob).
--
-- A BackupSchedule renders as a CronJob (label tidb.pingcap.com/backup-schedule). The tidb-gitops
-- controller follows its runs and its retention, and notes on it when the schedule is unwell:
-- tidb-gitops.io/backup-health is Degraded, and tidb-gitops.io/message says why, while the last run
-- failed, was lost or cannot start (a missing Secret, an image that cannot be pulled), or retention
-- cannot remove expired backups. The CronJob's own status cannot tell those apart: a run that never
-- starts counts as active for ever, and a schedule none of whose runs ever succeeded has no
-- lastSuccessfulTime to compare with.
--
-- * pause: true (spec.suspend): Suspended;
-- * noted Degraded by the controller: Degraded, with its reason;
-- * otherwise, and for every CronJob tidb-gitops did not render, the verdicts of Argo CD's own
--   CronJob check: Degraded when the last scheduled run ended without success after an earlier one
--   succeeded, Healthy while a run is under way, before any run, or before any run succeeded, and
--   Progressing while the CronJob has no status yet.
--
-- Argo CD runs it with gopher-lua (Lua 5.1) and only the base and table libraries.

local hs = {}
local spec = obj.spec or {}
local status = obj.status
local labels = obj.metadata.labels or {}
local annotations = obj.metadata.annotations or {}

if spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "CronJob is Suspended"
  return hs
end

if labels["tidb.pingcap.com/backup-schedule"] ~= nil and annotations["tidb-gitops.io/backup-health"] == "Degraded" then
  hs.status = "Degraded"
  hs.message = annotations["tidb-gitops.io/message"] or "the backup schedule is unwell"
  return hs
end

if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for CronJob"
  return hs
end

local scheduled = status.lastScheduleTime
local succeeded = status.lastSuccessfulTime
if scheduled == nil then
  hs.status = "Healthy"
  hs.message = "CronJob has not been scheduled yet"
elseif succeeded == nil then
  hs.status = "Healthy"
  hs.message = "The Cronjob never completed succesfully. It may not be healthy"
elseif status.active ~= nil and #status.active > 0 then
  hs.status = "Healthy"
  hs.message = "The job is running. Its last execution may not have been successful"
elseif succeeded < scheduled then
  hs.status = "Degraded"
  hs.message = "CronJob has not completed its last execution successfully"
else
  hs.status = "Healthy"
  hs.message = "CronJob has completed its last execution successfully"
end
return hs
