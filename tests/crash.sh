#!/usr/bin/env bash
# Crash safety, at moments drawn from a seeded sequence (repeatable):
#  - the loader: `ordo run` killed with SIGKILL N times; after each kill
#    `ordo resume` (or, before the first checkpoint, `ordo run` again)
#    continues, and the finished run equals an uninterrupted one step for
#    step, with no conflicting reports;
#  - resumes: N/4 jobs killed, then resumed at random world sizes and killed
#    again 4 times each (a crashed resume is resumed again), then finished;
#  - the service: `ordo serve` killed with SIGKILL N times during
#    concurrent ingest; after restart every step acknowledged with a 2xx is
#    in the ledger, PRAGMA integrity_check is ok, and the retried requests
#    created no duplicates.
# CRASHES=N (default 20), SEED=S.
set -uo pipefail
build=${BUILD:-build}
ordo=$build/ordo
crashes=${CRASHES:-20}
RANDOM=${SEED:-2026}
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 - "$tmp" <<'PY'
import json, os, random, sys
d = sys.argv[1]
random.seed(3)
os.makedirs(os.path.join(d, "data"))
with open(os.path.join(d, "data", "a.jsonl"), "w") as f:
    for i in range(3000):
        f.write(json.dumps({"text": f"doc {i} " + "lorem ipsum " * random.randint(5, 200)}) + "\n")
json.dump({"name": "crash", "seed": 1, "seq_len": 256, "global_batch": 32, "lanes": 8,
           "flush_every": 2, "shuffle": True, "tokenizer": {"kind": "bytes"},
           "sources": [{"name": "a", "paths": ["data/a.jsonl"], "weight": 1}]},
          open(os.path.join(d, "recipe.json"), "w"))
PY
recipe=$tmp/recipe.json
steps=3000
"$ordo" run "$recipe" --db "$tmp/base.db" --name base --world-size 4 --steps $steps \
  --checkpoint-every 10 --quiet || bad "uninterrupted run"

# ---- the loader: each of the N jobs is killed once at a random moment,
# then brought to the end (ordo resume, or ordo run again before the first
# checkpoint) and compared with the uninterrupted run.
digests() { # db run
  "$ordo" show "$2" --db "$1" --json --steps 1:$steps |
    /usr/bin/python3 -c 'import json,sys; print("\n".join(s["batch_digest"] for s in json.load(sys.stdin)["steps"]))'
}
field() { # db run field
  "$ordo" show "$2" --db "$1" --json 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['run']['$3'])" 2>/dev/null || echo 0
}
want=$(digests "$tmp/base.db" base)
# the run's span on this machine: the fastest of three, so a calibration
# slowed by other work cannot push the kills past the end of the runs
span=
for t in 1 2 3; do
  start=$(date +%s%N)
  "$ordo" run "$recipe" --db "$tmp/timing$t.db" --name t --world-size 4 --steps $steps \
    --checkpoint-every 10 --quiet
  took=$(( ($(date +%s%N) - start) / 1000000 ))
  [ -z "$span" ] || [ "$took" -lt "$span" ] && span=$took
  rm -f "$tmp/timing$t.db"*
done
mismatches=0 killed=0
exec 3>&2 2>/dev/null # timeout kills its own process group: no "Killed" notices
for i in $(seq 1 "$crashes"); do
  db=$tmp/k$i.db
  ms=$((10 + RANDOM % (span > 20 ? span : 20)))
  # a job that finished before its moment (the machine sped up) is run
  # again with the moment halved, so every job is really killed
  for try in 1 2 3 4 5; do
    timeout -s KILL "$(awk -v m=$ms 'BEGIN { printf "%.3f", m / 1000 }')" "$ordo" run "$recipe" \
      --db "$db" --name k --world-size 4 --steps $steps --checkpoint-every 10 --quiet \
      >/dev/null 2>&1 && [ "$(field "$db" k last_step)" = $steps ] || { killed=$((killed + 1)); break; }
    rm -f "$db" "$db-wal" "$db-shm"
    ms=$((ms / 2 > 1 ? ms / 2 : 1))
  done
  before=$(field "$db" k last_step)
  if [ "$(field "$db" k checkpoints)" != 0 ]; then
    "$ordo" resume k --db "$db" --world-size 4 --steps $steps --quiet 2>"$tmp/err" ||
      grep -q "is not after the checkpoint" "$tmp/err" || cat "$tmp/err"
  else
    "$ordo" run "$recipe" --db "$db" --name k --world-size 4 --steps $steps --checkpoint-every 10 \
      --quiet || cat "$tmp/err"
  fi
  got=$(digests "$db" k)
  conflicts=$(field "$db" k conflicts)
  if [ -n "${VERBOSE:-}" ]; then echo "job $i: killed at $ms ms after step $before"; fi
  if [ "$got" != "$want" ] || [ "$conflicts" != 0 ]; then
    mismatches=$((mismatches + 1))
    echo "  job $i (killed at $ms ms, step $before): differs or has $conflicts conflicts" >&3
  fi
  rm -f "$db" "$db-wal" "$db-shm"
done
exec 2>&3 3>&-
if [ $mismatches = 0 ] && [ $killed -ge $((crashes * 3 / 4)) ]; then
  ok "loader: $killed of $crashes jobs killed mid-run (run takes ${span} ms); every one resumed to the uninterrupted run's $steps batch digests, no conflicts"
else
  bad "loader: $mismatches of $crashes resumed jobs differ; $killed were killed mid-run"
fi

# ---- kills during resumes too: each job is killed at a random moment, then
# repeatedly resumed at a random world size (or, before its first
# checkpoint, run again at one) and killed again, then brought to the end at
# yet another; a crashed resume's segment gives way to the next one. Every
# ending equals the uninterrupted run (logical lanes: at any W).
worlds=(1 2 4 8)
resume_jobs=$(( crashes / 4 > 0 ? crashes / 4 : 1 )) kills_per_job=4
mismatches=0 killed=0 attempts=0 plan=""
exec 3>&2 2>/dev/null
continue_job() { # db world checkpoint-every [timeout-seconds]
  local limit=()
  [ -n "${4:-}" ] && limit=(timeout -s KILL "$4")
  if [ "$(field "$1" k checkpoints)" != 0 ]; then
    "${limit[@]}" "$ordo" resume k --db "$1" --world-size "$2" --steps $steps --checkpoint-every "$3" \
      --quiet >/dev/null 2>"$tmp/err"
  else
    "${limit[@]}" "$ordo" run "$recipe" --db "$1" --name k --world-size "$2" --steps $steps \
      --checkpoint-every "$3" --quiet >/dev/null 2>"$tmp/err"
  fi
}
for i in $(seq 1 "$resume_jobs"); do
  db=$tmp/r$i.db
  for kill in $(seq 0 "$kills_per_job"); do
    # each attempt covers at most a third of the run; a sparse checkpoint
    # interval makes kills before a resume's first checkpoint common
    w=${worlds[$((RANDOM % 4))]} every=$(( RANDOM % 2 ? 10 : 700 ))
    ms=$((10 + RANDOM % (span > 60 ? span / 3 : 20)))
    plan="$plan W=$w/$every@${ms}ms"
    attempts=$((attempts + 1))
    continue_job "$db" "$w" "$every" "$(awk -v m=$ms 'BEGIN { printf "%.3f", m / 1000 }')"
    code=$?
    if [ $code = 137 ]; then killed=$((killed + 1));
    elif [ $code != 0 ] && ! grep -q "is not after the checkpoint" "$tmp/err"; then
      echo "  resume job $i, attempt $kill at W=$w: exit $code: $(cat "$tmp/err")" >&3
    fi
  done
  w=${worlds[$((RANDOM % 4))]}
  continue_job "$db" "$w" 10 || grep -q "is not after the checkpoint" "$tmp/err" || cat "$tmp/err" >&3
  got=$(digests "$db" k)
  conflicts=$(field "$db" k conflicts)
  if [ -n "${VERBOSE:-}" ]; then echo "resume job $i:$plan, then W=$w" >&3; fi
  plan=""
  if [ "$got" != "$want" ] || [ "$conflicts" != 0 ]; then
    mismatches=$((mismatches + 1))
    echo "  resume job $i differs from the uninterrupted run or has $conflicts conflicts" >&3
  fi
  rm -f "$db" "$db-wal" "$db-shm"
done
exec 2>&3 3>&-
if [ $mismatches = 0 ] && [ $killed -ge $((attempts / 2)) ]; then
  ok "resumes: $resume_jobs jobs, $killed of $attempts runs and resumes killed at random world sizes; every one ended with the uninterrupted run's $steps batch digests, no conflicts"
else
  bad "resumes: $mismatches of $resume_jobs jobs differ; $killed of $attempts attempts were killed"
fi

# ---- a full disk: the file-size limit (RLIMIT_FSIZE) cuts the ledger's
# writes off mid-run; the run fails with a clear error, the ledger stays
# consistent, and once there is room again the job resumes to the same data
db=$tmp/full.db
(trap '' XFSZ; ulimit -f 2048; "$ordo" run "$recipe" --db "$db" --name f --world-size 4 \
  --steps $steps --checkpoint-every 10 --quiet) 2>"$tmp/err"
code=$?
integrity=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" "$db")
"$ordo" resume f --db "$db" --world-size 4 --steps $steps --quiet
if [ $code = 1 ] && grep -q "disk is full\|disk full\|is the disk full" "$tmp/err" && [ "$integrity" = ok ] &&
   [ "$(digests "$db" f)" = "$want" ]; then
  ok "full disk: the write fails with a clear error, integrity_check ok, the resumed run equals the uninterrupted one"
else
  bad "full disk: exit $code, '$(cat "$tmp/err")', integrity $integrity"
fi

# ---- the service
/usr/bin/python3 tests/crash_server.py "$ordo" "$tmp" "$crashes" "${SEED:-2026}" > "$tmp/server.out"
cat "$tmp/server.out" | sed '$d'
line=$(tail -n 1 "$tmp/server.out")
if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
  passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
else
  bad "service: the crash script did not finish"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
