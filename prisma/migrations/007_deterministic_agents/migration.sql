-- CreateTable
CREATE TABLE "Blueprint" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "runnerId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL DEFAULT 'procedural',
    "description" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "parametersSchema" TEXT NOT NULL,
    "timeoutSeconds" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Blueprint_runnerId_fkey" FOREIGN KEY ("runnerId") REFERENCES "Runner" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "BlueprintProblem" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "runnerId" TEXT NOT NULL,
    "file" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    CONSTRAINT "BlueprintProblem_runnerId_fkey" FOREIGN KEY ("runnerId") REFERENCES "Runner" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Run" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "runnerId" TEXT NOT NULL,
    "runnerName" TEXT NOT NULL,
    "agentName" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "parameters" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "parentSessionId" TEXT,
    "createdById" TEXT NOT NULL,
    "createdByName" TEXT NOT NULL,
    "resultText" TEXT,
    "resultData" TEXT,
    "exitCode" INTEGER,
    "stderr" TEXT NOT NULL DEFAULT '',
    "stdoutTruncated" BOOLEAN NOT NULL DEFAULT false,
    "timedOut" BOOLEAN NOT NULL DEFAULT false,
    "resultEvent" TEXT,
    "callbackState" TEXT NOT NULL DEFAULT 'none',
    "callbackDetail" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" DATETIME,
    "endedAt" DATETIME
);

-- CreateIndex
CREATE INDEX "Blueprint_orgId_name_idx" ON "Blueprint"("orgId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "Blueprint_runnerId_name_key" ON "Blueprint"("runnerId", "name");

-- CreateIndex
CREATE INDEX "BlueprintProblem_orgId_idx" ON "BlueprintProblem"("orgId");

-- CreateIndex
CREATE INDEX "Run_orgId_createdAt_idx" ON "Run"("orgId", "createdAt");

-- CreateIndex
CREATE INDEX "Run_runnerId_status_idx" ON "Run"("runnerId", "status");

-- CreateIndex
CREATE INDEX "Run_parentSessionId_idx" ON "Run"("parentSessionId");

