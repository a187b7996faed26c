-- CreateTable
CREATE TABLE "UsageTick" (
    "sessionId" TEXT NOT NULL,
    "windowStart" BIGINT NOT NULL,
    "orgId" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "agentSeconds" REAL NOT NULL,
    "terminalKb" REAL NOT NULL,
    "filesTouched" INTEGER NOT NULL,
    "invocations" INTEGER NOT NULL,
    "seq" INTEGER NOT NULL,
    "receivedAt" BIGINT NOT NULL,

    PRIMARY KEY ("sessionId", "windowStart")
);

-- CreateTable
CREATE TABLE "Plan" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "maxConcurrentSessions" INTEGER NOT NULL,
    "includedAgentMinutes" INTEGER NOT NULL,
    "monthlyCapMinutes" INTEGER,
    "basePriceCents" INTEGER NOT NULL,
    "overageCentsPerMinute" INTEGER NOT NULL,
    "patrolSchedules" INTEGER,
    "allowedProviders" TEXT NOT NULL DEFAULT '[]',
    "allowedRepos" TEXT NOT NULL DEFAULT '[]',
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "PlanChange" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "planId" TEXT NOT NULL,
    "effectivePeriod" TEXT NOT NULL,
    "requestedBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Invoice" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "plan" TEXT NOT NULL,
    "lineItems" TEXT NOT NULL,
    "totalCents" INTEGER NOT NULL,
    "agentSeconds" REAL NOT NULL,
    "patrolSeconds" REAL NOT NULL,
    "issuedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_User" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "email" TEXT NOT NULL,
    "passwordHash" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "mustChangePassword" BOOLEAN NOT NULL DEFAULT false,
    "isInstallAdmin" BOOLEAN NOT NULL DEFAULT false
);
INSERT INTO "new_User" ("createdAt", "email", "id", "mustChangePassword", "name", "passwordHash") SELECT "createdAt", "email", "id", "mustChangePassword", "name", "passwordHash" FROM "User";
DROP TABLE "User";
ALTER TABLE "new_User" RENAME TO "User";
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "UsageTick_orgId_period_kind_idx" ON "UsageTick"("orgId", "period", "kind");

-- CreateIndex
CREATE INDEX "PlanChange_orgId_effectivePeriod_idx" ON "PlanChange"("orgId", "effectivePeriod");

-- CreateIndex
CREATE UNIQUE INDEX "Invoice_orgId_period_key" ON "Invoice"("orgId", "period");


-- An installation set up before plans existed: its first account is the installation admin.
UPDATE "User" SET "isInstallAdmin" = true WHERE "id" = (SELECT "id" FROM "User" ORDER BY "createdAt" ASC, "id" ASC LIMIT 1);
