-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Runner" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "capacity" INTEGER NOT NULL,
    "providers" TEXT NOT NULL,
    "providerInfo" TEXT NOT NULL DEFAULT '[]',
    "labels" TEXT NOT NULL DEFAULT '[]',
    "repoAccess" TEXT NOT NULL DEFAULT '[]',
    "version" TEXT NOT NULL,
    "online" BOOLEAN NOT NULL DEFAULT false,
    "lostAt" DATETIME,
    "lastSeenAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Runner_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Runner" ("capacity", "createdAt", "hostname", "id", "lastSeenAt", "name", "online", "orgId", "providers", "version") SELECT "capacity", "createdAt", "hostname", "id", "lastSeenAt", "name", "online", "orgId", "providers", "version" FROM "Runner";
DROP TABLE "Runner";
ALTER TABLE "new_Runner" RENAME TO "Runner";
CREATE UNIQUE INDEX "Runner_orgId_name_key" ON "Runner"("orgId", "name");
CREATE TABLE "new_Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "runnerId" TEXT,
    "createdById" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "roomPath" TEXT NOT NULL,
    "currentRoom" TEXT,
    "mode" TEXT NOT NULL DEFAULT 'write',
    "goal" TEXT NOT NULL DEFAULT '',
    "activity" TEXT,
    "activityDetail" TEXT NOT NULL DEFAULT '',
    "activitySince" BIGINT,
    "diff" TEXT,
    "tests" TEXT,
    "title" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "lastSeq" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "endedAt" DATETIME,
    CONSTRAINT "Session_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Session_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repo" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Session_runnerId_fkey" FOREIGN KEY ("runnerId") REFERENCES "Runner" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "Session_createdById_fkey" FOREIGN KEY ("createdById") REFERENCES "User" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_Session" ("createdAt", "createdById", "endedAt", "id", "lastSeq", "orgId", "provider", "reason", "repoId", "roomPath", "runnerId", "state", "title", "updatedAt") SELECT "createdAt", "createdById", "endedAt", "id", "lastSeq", "orgId", "provider", "reason", "repoId", "roomPath", "runnerId", "state", "title", "updatedAt" FROM "Session";
DROP TABLE "Session";
ALTER TABLE "new_Session" RENAME TO "Session";
CREATE INDEX "Session_orgId_state_idx" ON "Session"("orgId", "state");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

