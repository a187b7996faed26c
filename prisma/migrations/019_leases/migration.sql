-- CreateTable
CREATE TABLE "Lease" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "holder" TEXT NOT NULL,
    "epoch" INTEGER NOT NULL DEFAULT 1,
    "expiresAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "UsageTotal" (
    "orgId" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "seconds" REAL NOT NULL DEFAULT 0,

    PRIMARY KEY ("orgId", "period")
);

-- CreateIndex
CREATE INDEX "Lease_holder_idx" ON "Lease"("holder");


-- Portable data statements (copied into the PostgreSQL migration by scripts/db-sync.mjs)
-- The running totals start from the ticks already stored.
INSERT INTO "UsageTotal" ("orgId", "period", "seconds") SELECT "orgId", "period", SUM("agentSeconds") FROM "UsageTick" GROUP BY "orgId", "period";
