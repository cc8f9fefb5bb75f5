-- Argo CD health check for apps/StatefulSet (argocd-cm key resource.customizations.health.apps_StatefulSet).
--
-- Argo CD's built-in check calls a StatefulSet healthy once the Pods above the partition are updated.
-- The tidb-gitops controller holds the partition at the replica count and lowers it one Pod at a time,
-- so with the built-in check an upgrade looks finished before a single Pod has restarted. This check
-- waits until the StatefulSet controller reports every Pod at the update revision.
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

local function result(status, message)
  hs.status = status
  hs.message = message
  return hs
end

local metadata = obj.metadata or {}
local spec = obj.spec or {}
local status = obj.status
local generation = num(metadata.generation, 0)

if status == nil or num(status.observedGeneration, 0) < generation then
  return result("Progressing", "waiting for the StatefulSet controller to observe generation " .. count(generation))
end

-- spec.replicas missing counts as 1, the API's default.
local replicas = num(spec.replicas, 1)
local ready = num(status.readyReplicas, 0)
local updated = num(status.updatedReplicas, 0)
local strategy = spec.updateStrategy or {}
local onDelete = strategy.type == "OnDelete"
local partition = num((strategy.rollingUpdate or {}).partition, 0)
-- The replica count the renderer asked for; the tidb-gitops controller moves spec.replicas towards it.
local desired = tonumber((metadata.annotations or {})["tidb-gitops.io/replicas"])

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
  if desired ~= nil and desired > replicas then
    message = message .. "; scaling to " .. count(desired) .. " replicas"
  end
  return result("Progressing", message)
end

-- A new StatefulSet starts at one replica; the controller adds the others step by step.
if desired ~= nil and desired > replicas then
  return result("Progressing", "scaling to " .. count(desired) .. " replicas: " .. count(replicas) .. " so far; the tidb-gitops controller adds Pods step by step")
end

local message = count(ready) .. " of " .. count(replicas) .. " Pods ready"
if onDelete and updated < replicas then
  message = message .. "; " .. count(updated) .. " at the latest revision, the others update when they are deleted (OnDelete)"
end
return result("Healthy", message)
