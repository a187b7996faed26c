#!/bin/sh
# Applies every migration to a fresh SQLite file, reads the result back (db pull) and prints the
# SQL that would still be needed to reach prisma/schema.prisma: "-- This is an empty migration."
# when they agree.
set -e
db=$(mktemp -u /tmp/av-migcheck-XXXXXX.db)
pulled=$(mktemp /tmp/av-migcheck-XXXXXX.prisma)
DATABASE_URL="file:$db" node scripts/prisma.mjs migrate deploy >/dev/null 2>&1
# db pull prints a warning about the adapter before the schema: keep from the generator on.
DATABASE_URL="file:$db" node scripts/prisma.mjs db pull --print 2>/dev/null | sed -n '/^generator /,$p' > "$pulled"
DATABASE_URL="file:$db" node scripts/prisma.mjs migrate diff --from-schema-datamodel "$pulled" --to-schema-datamodel prisma/schema.prisma --script 2>/dev/null
rm -f "$db" "$db-wal" "$db-shm" "$pulled"
