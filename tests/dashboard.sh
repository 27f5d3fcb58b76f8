#!/usr/bin/env bash
# The dashboard in real headless Chromium (Debian's `chromium`, driven by
# playwright-core from npm) against a real `ordo serve` whose ledger was
# filled by ordo run / ordo resume (the demo's: elastic resumes at W = 8
# and 2, a rank-bound resume) and a run of a schedule that ramps the two
# sources' shares (80/20 to 20/80 from step 21 to step 41), and one of the
# same recipe starting at 70/30 (the recipe diff), and two runs whose
# schedules differ from step 5 (the batch view). Screenshots of
# every view go to build/screenshots/.
set -uo pipefail
build=${BUILD:-build}
fail() { echo "dashboard: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
scripts/deps.sh chromium curl >&2 || fail "chromium or curl is missing"
BUILD="$build" scripts/peers.sh >&2 || fail "could not install playwright-core"
if [ ! -f "$build/demo/ordo.db" ]; then
  DEMO_SERVE=0 BUILD="$build" scripts/demo.sh >/dev/null 2>&1 || fail "scripts/demo.sh failed"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$build/demo/ordo.db" "$tmp/ordo.db"
demo=$(cd "$build/demo" && pwd)
cat > "$tmp/ramp.json" <<JSON
{"name": "ramp", "seed": 5, "seq_len": 64, "global_batch": 32, "lanes": 8, "flush_every": 2,
 "tokenizer": {"kind": "bytes"},
 "sources": [{"name": "moby-dick", "paths": ["$demo/moby-dick/*.jsonl.zst"]},
             {"name": "sotu", "paths": ["$demo/sotu/*.jsonl.zst"]}],
 "schedule": [{"step": 1, "weights": {"moby-dick": 0.8, "sotu": 0.2}},
              {"step": 41, "linear_from": 21, "weights": {"moby-dick": 0.2, "sotu": 0.8}}]}
JSON
"$build/ordo" run "$tmp/ramp.json" --db "$tmp/ordo.db" --name ramp --world-size 2 --steps 60 \
  --quiet >&2 || fail "ordo run of the ramping schedule failed"
# The same recipe with the first schedule entry at 70/30: the compare view
# of ramp and ramp-b must list how the recipes differ.
sed 's/"moby-dick": 0.8, "sotu": 0.2/"moby-dick": 0.7, "sotu": 0.3/' "$tmp/ramp.json" > "$tmp/ramp-b.json"
"$build/ordo" run "$tmp/ramp-b.json" --db "$tmp/ordo.db" --name ramp-b --world-size 2 --steps 20 \
  --quiet >&2 || fail "ordo run of the second ramp failed"
# Three steps only: the step axes must still tick at whole steps.
"$build/ordo" run "$tmp/ramp.json" --db "$tmp/ordo.db" --name short --world-size 2 --steps 3 \
  --quiet >&2 || fail "ordo run of the three-step run failed"
# Two runs whose recipes differ in a schedule entry from step 5 (a flush
# epoch's first step): their batches differ at step 5 in the lanes compare
# names there (the batch view's highlights).
for w in 5 6; do
  cat > "$tmp/sched-$w.json" <<JSON
{"name": "sched", "seed": 5, "seq_len": 64, "global_batch": 16, "lanes": 8, "flush_every": 2,
 "tokenizer": {"kind": "bytes"},
 "sources": [{"name": "moby-dick", "paths": ["$demo/moby-dick/*.jsonl.zst"]},
             {"name": "sotu", "paths": ["$demo/sotu/*.jsonl.zst"]}],
 "schedule": [{"step": 1, "weights": {"moby-dick": 0.5, "sotu": 0.5}},
              {"step": 5, "weights": {"moby-dick": 0.$w, "sotu": 0.$((10 - w))}}]}
JSON
done
"$build/ordo" run "$tmp/sched-5.json" --db "$tmp/ordo.db" --name sched-a --world-size 2 --steps 6 \
  --quiet >&2 || fail "ordo run of the first scheduled run failed"
"$build/ordo" run "$tmp/sched-6.json" --db "$tmp/ordo.db" --name sched-b --world-size 4 --steps 6 \
  --quiet >&2 || fail "ordo run of the second scheduled run failed"
mkfifo "$tmp/ready"
"$build/ordo" serve --db "$tmp/ordo.db" --listen 127.0.0.1:0 > "$tmp/ready" 2> "$tmp/log" &
server=$!
read -r line < "$tmp/ready" # blocks until the server has bound its port
url=$(echo "$line" | grep -o 'http://[0-9.]*:[0-9]*')
[ -n "$url" ] || { kill "$server"; fail "server did not start: $line"; }
# A second server bound to every address: reads need a token there.
token=$("$build/ordo" token create --role reader --db "$tmp/ordo.db")
mkfifo "$tmp/ready2"
"$build/ordo" serve --db "$tmp/ordo.db" --listen 0.0.0.0:0 --insecure > "$tmp/ready2" 2> "$tmp/log2" &
server2=$!
read -r line < "$tmp/ready2"
port2=$(echo "$line" | grep -o ':[0-9]* ' | tr -d ': ')
# A run created through the API for a resume: its first step is 21.
writer=$("$build/ordo" token create --role writer --db "$tmp/ordo.db")
recipe_id=$("$build/ordo" runs --db "$tmp/ordo.db" --json | grep -o '"recipe_id": *"[0-9a-f]*"' | head -1 |
            grep -o '[0-9a-f]\{64\}')
post() { curl -sf -H "Authorization: Bearer $writer" -H 'Content-Type: application/json' -d "$2" "$url$1"; }
post /api/runs "{\"name\": \"resumed via api\", \"recipe_id\": \"$recipe_id\", \"world_size\": 4}" \
  >/dev/null || fail "could not create a run through the API"
d=$(printf '%064d' 7)
post "/api/runs/resumed%20via%20api/steps" \
  "{\"steps\": [{\"step\": 21, \"batch_digest\": \"$d\"}, {\"step\": 22, \"batch_digest\": \"$d\"}]}" \
  >/dev/null || fail "could not report steps through the API"
# The ablation experiment's reduced grid (2 recipes x W in {1, 2} x both
# loaders, 6 steps), reported through this server.
scripts/deps.sh python3 python3-numpy python3-torch libopenblas0-pthread >&2 ||
  fail "python3-torch is missing"
OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/experiment.py --reduced --url "$url" --token "$writer" \
  --out "$tmp/experiment" --ordo "$build/ordo" --peers "$build/peers/node_modules" > "$tmp/experiment.log" 2>&1 ||
  { cat "$tmp/experiment.log" >&2; kill "$server" "$server2"; fail "the reduced experiment failed"; }
mkdir -p "$build/screenshots"
ORDO_TOKEN_URL="http://127.0.0.1:$port2" ORDO_TOKEN="$token" ORDO_EXPERIMENT="$tmp/experiment/results.json" \
  node tests/web/dashboard.mjs "$build/peers/node_modules" "$url" "$build/screenshots"
code=$?
kill -TERM "$server" "$server2"
wait "$server" || { echo "dashboard: the server did not stop cleanly" >&2; code=1; }
wait "$server2" || { echo "dashboard: the second server did not stop cleanly" >&2; code=1; }
exit $code
