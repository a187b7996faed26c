#!/usr/bin/env bash
# Installs the real agent CLIs, pinned, into .agent-clis/ — a test folder, never the project's
# dependencies — so the provider integration tests run the CLIs users run. The versions are the
# ones the adapters in runner/providers/ were written for (see each adapter's versionRange).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=.agent-clis
mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name":"agent-clis","private":true}' > "$prefix/package.json"
npm install --prefix "$prefix" --no-audit --no-fund --no-save --ignore-scripts=false \
  @anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0 @google/gemini-cli@0.61.0
