-- CreateTable
CREATE TABLE "Quest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "goal" TEXT NOT NULL,
    "planner" TEXT NOT NULL,
    "plan" TEXT NOT NULL,
    "planInputHash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "branch" TEXT NOT NULL,
    "baseRef" TEXT NOT NULL,
    "runnerId" TEXT,
    "createdById" TEXT NOT NULL,
    "createdByName" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" DATETIME
);

-- CreateTable
CREATE TABLE "QuestStep" (
    "questId" TEXT NOT NULL,
    "stepId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "skill" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "result" TEXT,
    "receipt" TEXT,
    "proposal" TEXT,
    "replay" TEXT,

    PRIMARY KEY ("questId", "stepId"),
    CONSTRAINT "QuestStep_questId_fkey" FOREIGN KEY ("questId") REFERENCES "Quest" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Quest_orgId_createdAt_idx" ON "Quest"("orgId", "createdAt");

