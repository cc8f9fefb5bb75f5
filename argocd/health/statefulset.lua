-- Argo CD health check for apps/StatefulSet (argocd-cm key resource.customizations.health.apps_StatefulSet).
--
-- Argo CD keeps one check per kind, so this one judges every StatefulSet the Argo CD manages:
--
-- * A StatefulSet tidb-gitops rendered (it carries the annotation tidb-gitops.io/replicas) is judged by
--   the tidb-gitops rules. The tidb-gitops controller holds the partition at the replica count and
--   lowers it one Pod at a time, so Argo CD's built-in check would call an upgrade finished before a
--   single Pod restarted; and the controller, not Git, moves spec.replicas towards the annotation.
--   This check waits until every Pod runs the update revision and the StatefulSet has the replicas
--   the controller aims for, and calls a scale-in the controller refuses Degraded.
-- * Every other StatefulSet gets Argo CD's own built-in rules, ported below from gitops-engine's
--   pkg/health/health_statefulset.go (getAppsv1StatefulSetHealth). If you had a health check of your
--   own for StatefulSets, put it in place of builtin().
--
-- The controller writes two annotations for this check: tidb-gitops.io/failover-replicas (the Pods it
-- added for failover, on top of the rendered count) and tidb-gitops.io/refused (why it will not scale
-- in). The Flux healthCheckExprs in docs/reference.md's example apply the same rules.
--
-- Argo CD runs it with gopher-lua (Lua 5.1) and only the base and table libraries: no string or math
-- functions here, and nothing that Lua 5.1 lacks (no integer division, no goto).

local hs = {}

-- A number from the object; the default when the field is missing or not a number.
local function num(value, default)
  local n = tonumber(value)
  if n == nil then
    return default
  end
  return n
end

local DIGITS = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" }

-- A count as text: "3", never "3.0" (which Lua 5.3 prints for a float, and tostring alone may give).
local function count(n)
  if n ~= n or n < 0 or n % 1 ~= 0 or n > 1e15 then
    return tostring(n)
  end
  if n == 0 then
    return "0"
  end
  local text = ""
  while n > 0 do
    local digit = n % 10
    text = DIGITS[digit + 1] .. text
    n = (n - digit) / 10
  end
  return text
end

-- A signed count (the built-in check's Go %d of a difference).
local function signed(n)
  if n < 0 then
    return "-" .. count(-n)
  end
  return count(n)
end

local function result(status, message)
  hs.status = status
  hs.message = message
  return hs
end

local metadata = obj.metadata or {}
local annotations = metadata.annotations or {}
local spec = obj.spec or {}
local status = obj.status or {}
local strategy = spec.updateStrategy or {}

-- Argo CD's built-in StatefulSet check. Missing numbers read as Go's zero values; a missing
-- spec.replicas or partition skips the comparison that needs it, as a nil pointer does there.
local function builtin()
  local generation = num(metadata.generation, 0)
  local observed = num(status.observedGeneration, 0)
  if observed == 0 or generation > observed then
    return result("Progressing", "Waiting for statefulset spec update to be observed...")
  end
  local ready = num(status.readyReplicas, 0)
  local updated = num(status.updatedReplicas, 0)
  local replicas = tonumber(spec.replicas)
  if replicas ~= nil and ready < replicas then
    return result("Progressing", "Waiting for " .. signed(replicas - ready) .. " pods to be ready...")
  end
  if strategy.type == "RollingUpdate" and strategy.rollingUpdate ~= nil then
    local partition = tonumber(strategy.rollingUpdate.partition)
    if replicas ~= nil and partition ~= nil and updated < replicas - partition then
      return result("Progressing", "Waiting for partitioned roll out to finish: " .. count(updated) .. " out of " ..
        signed(replicas - partition) .. " new pods have been updated...")
    end
    return result("Healthy", "partitioned roll out complete: " .. count(updated) .. " new pods have been updated...")
  end
  if strategy.type == "OnDelete" then
    return result("Healthy", "statefulset has " .. count(ready) .. " ready pods")
  end
  local updateRevision = status.updateRevision or ""
  if updateRevision ~= (status.currentRevision or "") then
    return result("Progressing", "waiting for statefulset rolling update to complete " .. count(updated) ..
      " pods at revision " .. updateRevision .. "...")
  end
  return result("Healthy", "statefulset rolling update complete " .. count(num(status.currentReplicas, 0)) ..
    " pods at revision " .. (status.currentRevision or "") .. "...")
end

-- The replica count the renderer asked for; the tidb-gitops controller moves spec.replicas towards it.
local desired = tonumber(annotations["tidb-gitops.io/replicas"])
if desired == nil then
  return builtin()
end

local generation = num(metadata.generation, 0)
if obj.status == nil or num(status.observedGeneration, 0) < generation then
  return result("Progressing", "waiting for the StatefulSet controller to observe generation " .. count(generation))
end

local refused = annotations["tidb-gitops.io/refused"]
if refused ~= nil then
  return result("Degraded", "the tidb-gitops controller refuses to scale in: " .. refused)
end

-- spec.replicas missing counts as 1, the API's default.
local replicas = num(spec.replicas, 1)
local ready = num(status.readyReplicas, 0)
local updated = num(status.updatedReplicas, 0)
local onDelete = strategy.type == "OnDelete"
local partition = num((strategy.rollingUpdate or {}).partition, 0)
local target = desired + num(annotations["tidb-gitops.io/failover-replicas"], 0)

-- With OnDelete, Pods change revision only when someone deletes them, and the StatefulSet controller
-- never marks such a rollout complete: waiting for it would leave the app Progressing for good.
if not onDelete and status.updateRevision ~= nil and status.updateRevision ~= status.currentRevision then
  local message = "rolling update: " .. count(updated) .. " of " .. count(replicas) .. " Pods updated"
  if partition >= replicas then
    message = message .. "; the tidb-gitops controller steps the partition one Pod at a time"
  end
  return result("Progressing", message)
end

if ready < replicas then
  local message = count(ready) .. " of " .. count(replicas) .. " Pods ready"
  if target > replicas then
    message = message .. "; scaling to " .. count(target) .. " replicas"
  end
  return result("Progressing", message)
end

-- A new StatefulSet starts at one replica; the controller adds the others step by step.
if target > replicas then
  return result("Progressing", "scaling to " .. count(target) .. " replicas: " .. count(replicas) .. " so far; the tidb-gitops controller adds Pods step by step")
end

-- The controller retires what the highest Pod holds (PD membership, TiKV regions) before it lowers
-- spec.replicas, which can take hours; a refusal is reported above.
if target < replicas then
  return result("Progressing", "scaling in to " .. count(target) .. " replicas: " .. count(replicas) .. " so far; the tidb-gitops controller removes Pods one at a time")
end

if num(status.replicas, 0) > replicas then
  return result("Progressing", count(num(status.replicas, 0)) .. " Pods for " .. count(replicas) .. " replicas; the others are shutting down")
end

local message = count(ready) .. " of " .. count(replicas) .. " Pods ready"
if target > desired then
  message = message .. " (" .. count(target - desired) .. " added by failover)"
end
if onDelete and updated < replicas then
  message = message .. "; " .. count(updated) .. " at the latest revision, the others update when they are deleted (OnDelete)"
end
return result("Healthy", message)
