-- CreateTable
CREATE TABLE "TerminalSegment" (
    "sessionId" TEXT NOT NULL,
    "seqFrom" INTEGER NOT NULL,
    "seqTo" INTEGER NOT NULL,
    "tsFrom" BIGINT NOT NULL,
    "tsTo" BIGINT NOT NULL,
    "chars" INTEGER NOT NULL,
    "chunks" TEXT NOT NULL,
    "data" TEXT NOT NULL,

    PRIMARY KEY ("sessionId", "seqFrom"),
    CONSTRAINT "TerminalSegment_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "TerminalSeekPoint" (
    "sessionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "ts" BIGINT NOT NULL,
    "cols" INTEGER NOT NULL,
    "rows" INTEGER NOT NULL,
    "data" TEXT NOT NULL,

    PRIMARY KEY ("sessionId", "seq"),
    CONSTRAINT "TerminalSeekPoint_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- AlterTable (a plain ADD COLUMN, not Prisma's table rebuild: a rebuild written against this
-- branch's Session columns would drop columns other migrations add to Session)
ALTER TABLE "Session" ADD COLUMN "outputPrunedThrough" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "TerminalSegment_sessionId_seqTo_idx" ON "TerminalSegment"("sessionId", "seqTo");

-- CreateIndex
CREATE INDEX "TerminalSegment_sessionId_tsFrom_idx" ON "TerminalSegment"("sessionId", "tsFrom");

-- CreateIndex
CREATE INDEX "TerminalSeekPoint_sessionId_ts_idx" ON "TerminalSeekPoint"("sessionId", "ts");

