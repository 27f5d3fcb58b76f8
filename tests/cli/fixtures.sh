#!/usr/bin/env bash
# Makes the fixture set the CLI cases start from, in the folder $1, with the
# ordo binary $2 (real processes, real SQLite files). Each case runs in a
# fresh copy of it:
#   data/doc-0.jsonl, data/doc-1.jsonl   a small corpus of 20 documents each
#   recipe.json        4 lanes, global batch 8, seq_len 16, bytes tokenizer
#   recipe32.json      32 lanes, global batch 32, seq_len 8
#   cl99k.json         a tiktoken recipe naming an unknown encoding
#   gone.json          a tiktoken recipe whose rank file gone.tiktoken is missing
#   broken.json        a recipe whose JSON breaks on line 3
#   cli.db             runs "base" (W=4, steps 1-100) and "resumed" (W=4 to
#                      step 50, checkpoint 50, then W=8 to step 100)
#   a.db, b.db         one run each: "in-a", "in-b"
#   spaced.db          a run named "my run"
#   newer.db           a ledger whose schema version is 42
#   junk.db            98 bytes of text
#   t.txt              "hello"
#   empty-vocab/       a folder with no rank files
set -euo pipefail
dir=$1 ordo=$2
mkdir -p "$dir/data" "$dir/empty-vocab"
cd "$dir"

words=(data order lane batch token gradient 'caf\u00e9' '\u03bb' 'r\u00e9sum\u00e9' seed)
for f in 0 1; do
  for d in $(seq 0 19); do
    text="doc $f:"
    for w in $(seq 0 $(((d * 7 + f * 3) % 23 + 4))); do
      text="$text ${words[$(((d * 31 + w * 17 + f) % 10))]}"
    done
    printf '{"id": %d, "text": "%s"}\n' "$d" "$text"
  done > "data/doc-$f.jsonl"
done

sources='[{"name": "a", "paths": ["data/*.jsonl"], "weight": 1}]'
recipe() { # NAME LANES GLOBAL_BATCH SEQ_LEN FLUSH_EVERY
  printf '{"name": "%s", "seed": 1234, "seq_len": %d, "global_batch": %d,\n "lanes": %d, "flush_every": %d, "shuffle": false,\n "tokenizer": {"kind": "bytes"}, "sources": %s}\n' \
    "$1" "$4" "$3" "$2" "$5" "$sources" > "$1.json"
}
recipe recipe 4 8 16 2
recipe recipe32 32 32 8 2
tiktoken() { # FILE ENCODING RANKS
  printf '{"seed": 1, "seq_len": 32, "global_batch": 4, "lanes": 4, "tokenizer": {"kind": "tiktoken", "encoding": "%s", "path": "%s"}, "sources": %s}' \
    "$2" "$3" "$sources" > "$1"
}
tiktoken cl99k.json cl99k x
tiktoken gone.json cl100k_base gone.tiktoken
printf '{"seed": 1, "seq_len": 16,\n "global_batch": 8, "lanes": 4,\n "sources": [}\n' > broken.json

quiet() { "$ordo" "$@" --quiet > /dev/null; }
quiet run recipe32.json --db cli.db --name base --world-size 4 --steps 100
quiet run recipe32.json --db cli.db --name resumed --world-size 4 --steps 50 --checkpoint-every 50
quiet resume resumed --db cli.db --world-size 8 --steps 100
quiet run recipe.json --db a.db --name in-a --world-size 2 --steps 3
quiet run recipe.json --db b.db --name in-b --world-size 2 --steps 3
quiet run recipe.json --db spaced.db --name "my run" --world-size 2 --steps 3
"$ordo" migrate --db newer.db > /dev/null
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version = 42"); c.close()' newer.db
head -c 98 /dev/zero | tr '\0' '.' | sed 's/^/this is not sqlite at all, not even close/' | head -c 98 > junk.db
printf 'hello' > t.txt
