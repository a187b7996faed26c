-- CreateTable
CREATE TABLE "DtaRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "runnerId" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "branch" TEXT NOT NULL,
    "baseRef" TEXT NOT NULL,
    "invocation" TEXT NOT NULL,
    "gateRequired" BOOLEAN NOT NULL,
    "approvalId" TEXT,
    "output" TEXT,
    "patch" TEXT,
    "patchSha256" TEXT,
    "commitSha" TEXT,
    "files" TEXT NOT NULL DEFAULT '[]',
    "events" TEXT NOT NULL DEFAULT '[]',
    "createdById" TEXT NOT NULL,
    "createdByName" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" DATETIME
);

-- CreateTable
CREATE TABLE "DtaLock" (
    "repoId" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,

    PRIMARY KEY ("repoId", "branch", "path")
);

-- CreateIndex
CREATE INDEX "DtaRun_orgId_createdAt_idx" ON "DtaRun"("orgId", "createdAt");

-- CreateIndex
CREATE INDEX "DtaRun_repoId_status_idx" ON "DtaRun"("repoId", "status");

-- CreateIndex
CREATE INDEX "DtaLock_runId_idx" ON "DtaLock"("runId");

