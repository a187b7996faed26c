-- The radar asks for an org's live DTA runs on every request (orgId + status): without this index
-- it scanned the org's whole run history.
-- CreateIndex
CREATE INDEX "DtaRun_orgId_status_idx" ON "DtaRun"("orgId", "status");
