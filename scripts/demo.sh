#!/usr/bin/env bash
# The end-to-end example behind `make demo`: records a run and its elastic
# resume into a SQLite ledger with libordo, then lists and shows them.
set -euo pipefail
build=${BUILD:-build}
db=$build/demo/ordo.db
mkdir -p "$build/demo"

echo "== recording into $db"
"$build/record_run" "$db"
echo
echo "== ordo runs --db $db"
"$build/ordo" runs --db "$db"
echo
echo "== ordo show elastic --db $db --steps 59:62"
"$build/ordo" show elastic --db "$db" --steps 59:62
