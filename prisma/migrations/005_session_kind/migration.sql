-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "runnerId" TEXT,
    "createdById" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'agent',
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
INSERT INTO "new_Session" ("activity", "activityDetail", "activitySince", "createdAt", "createdById", "currentRoom", "diff", "endedAt", "goal", "id", "lastSeq", "mode", "orgId", "provider", "reason", "repoId", "roomPath", "runnerId", "state", "tests", "title", "updatedAt") SELECT "activity", "activityDetail", "activitySince", "createdAt", "createdById", "currentRoom", "diff", "endedAt", "goal", "id", "lastSeq", "mode", "orgId", "provider", "reason", "repoId", "roomPath", "runnerId", "state", "tests", "title", "updatedAt" FROM "Session";
DROP TABLE "Session";
ALTER TABLE "new_Session" RENAME TO "Session";
CREATE INDEX "Session_orgId_state_idx" ON "Session"("orgId", "state");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

