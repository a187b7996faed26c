#!/bin/sh
# Lint-free sanity check: every source file parses.
set -e
for f in $(find src -name '*.js'); do node --check "$f"; done
echo "all sources parse"
