-- Argo CD health check for ConfigMap (argocd-cm key resource.customizations.health.ConfigMap).
--
-- A one-shot Backup or Restore renders as a ConfigMap holding the Job that carries it out (label
-- tidb-gitops.io/operation); the tidb-gitops controller creates that Job once and writes where the
-- operation stands on the ConfigMap: tidb-gitops.io/phase (Waiting, Running, Complete, Failed, Lost)
-- and tidb-gitops.io/message. A log backup's ConfigMap (same label) gets the same phases: Complete
-- while its task is in the state its document asks for, Waiting or Running while a command waits or
-- runs, Failed when one failed or an error paused the task. A Changefeed's ConfigMap (same label) too:
-- Complete in the state its document asks, Running while it is created, updated, paused or resumed,
-- Waiting on a Secret or TiCDC, Failed when TiCDC failed it. This check reads them:
--
-- * Waiting or Running, or no phase yet (the controller has not seen it): Progressing;
-- * Complete: Healthy;
-- * Failed or Lost: Degraded.
--
-- Every other ConfigMap is Healthy, as Argo CD judges a ConfigMap without a check. The Flux
-- healthCheckExprs in docs/reference.md's example apply the same rules.
--
-- Argo CD runs it with gopher-lua (Lua 5.1) and only the base and table libraries.

local hs = {}
local labels = obj.metadata.labels or {}
if labels["tidb-gitops.io/operation"] == nil then
  hs.status = "Healthy"
  hs.message = ""
  return hs
end

local annotations = obj.metadata.annotations or {}
local phase = annotations["tidb-gitops.io/phase"]
local message = annotations["tidb-gitops.io/message"] or ""
if phase == "Complete" then
  hs.status = "Healthy"
elseif phase == "Failed" or phase == "Lost" then
  hs.status = "Degraded"
else
  hs.status = "Progressing"
  if phase == nil then
    message = "waiting for the tidb-gitops controller to take it up"
  end
end
hs.message = message
return hs
