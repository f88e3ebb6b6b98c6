#!/usr/bin/env bash
# `npm test`: type-check, then every test file under node's test runner (via tsx).
# Node 20 expands no globs and finds no .ts files by itself, so the shell lists the files explicitly.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== typecheck (tsc --noEmit)"
npx tsc --noEmit -p tsconfig.json
echo "== tests"
shopt -s nullglob
files=(test/*.test.ts)
if [ ${#files[@]} -eq 0 ]; then echo "no test files found" >&2; exit 1; fi
exec node --import tsx --test --test-concurrency=2 "$@" "${files[@]}"
