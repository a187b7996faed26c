-- CreateTable
CREATE TABLE "Patrol" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "schedule" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdById" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Patrol_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Patrol_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repo" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PatrolRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "patrolId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "triggerKey" TEXT NOT NULL,
    "triggeredBy" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "summary" TEXT NOT NULL DEFAULT '',
    "sessionId" TEXT,
    "exitCode" INTEGER,
    "commitSha" TEXT,
    "tests" TEXT,
    "findings" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" DATETIME,
    "finishedAt" DATETIME,
    CONSTRAINT "PatrolRun_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "PatrolRun_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repo" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "PatrolRun_patrolId_fkey" FOREIGN KEY ("patrolId") REFERENCES "Patrol" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Alert" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "patrolId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "path" TEXT,
    "line" INTEGER,
    "roomPath" TEXT NOT NULL,
    "excerpt" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "raisedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolvedAt" DATETIME,
    "resolvedBy" TEXT,
    CONSTRAINT "Alert_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Alert_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repo" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Alert_patrolId_fkey" FOREIGN KEY ("patrolId") REFERENCES "Patrol" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "RepoWebhook" (
    "repoId" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "lastDeliveryAt" DATETIME,
    CONSTRAINT "RepoWebhook_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repo" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Patrol_orgId_idx" ON "Patrol"("orgId");

-- CreateIndex
CREATE UNIQUE INDEX "Patrol_repoId_kind_key" ON "Patrol"("repoId", "kind");

-- CreateIndex
CREATE UNIQUE INDEX "PatrolRun_triggerKey_key" ON "PatrolRun"("triggerKey");

-- CreateIndex
CREATE UNIQUE INDEX "PatrolRun_sessionId_key" ON "PatrolRun"("sessionId");

-- CreateIndex
CREATE INDEX "PatrolRun_patrolId_createdAt_idx" ON "PatrolRun"("patrolId", "createdAt");

-- CreateIndex
CREATE INDEX "PatrolRun_repoId_createdAt_idx" ON "PatrolRun"("repoId", "createdAt");

-- CreateIndex
CREATE INDEX "PatrolRun_status_idx" ON "PatrolRun"("status");

-- CreateIndex
CREATE INDEX "Alert_orgId_state_idx" ON "Alert"("orgId", "state");

-- CreateIndex
CREATE INDEX "Alert_patrolId_fingerprint_state_idx" ON "Alert"("patrolId", "fingerprint", "state");

