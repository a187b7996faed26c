-- CreateTable
CREATE TABLE "SessionRedaction" (
    "sessionId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "rule" TEXT NOT NULL,
    "secretName" TEXT NOT NULL DEFAULT '',
    "count" INTEGER NOT NULL,
    "firstSeq" INTEGER NOT NULL,
    "lastSeq" INTEGER NOT NULL,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("sessionId", "source", "rule", "secretName"),
    CONSTRAINT "SessionRedaction_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

