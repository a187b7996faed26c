-- CreateTable
CREATE TABLE "TerminalSnapshot" (
    "sessionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "ts" BIGINT NOT NULL,
    "cols" INTEGER NOT NULL,
    "rows" INTEGER NOT NULL,
    "data" TEXT NOT NULL,

    PRIMARY KEY ("sessionId", "seq"),
    CONSTRAINT "TerminalSnapshot_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "TerminalSnapshot_sessionId_ts_idx" ON "TerminalSnapshot"("sessionId", "ts");

