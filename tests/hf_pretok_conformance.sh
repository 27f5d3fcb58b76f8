#!/usr/bin/env bash
# tokenizer.json pre-tokenizer conformance: ordo's pieces (build/hf_pretok_dump,
# with the hand scanners, and for the patterns that have one again through
# PCRE2 alone) against the pinned `tokenizers` library's preTokenizeString,
# line for line, over a sample of the tokenizer corpus (every 39th line:
# UDHR languages, books, every code point in context; plus the edge cases
# at its end; about 1.7 MB), for the pre-tokenizers of Qwen3, Llama 3.1,
# Gemma 3, Llama 2, GPT-4o, DeepSeek V3 and BLOOM, each other supported
# pre-tokenizer and behavior, and regex features (on a fifth of the
# sample). Needs node and the pinned peers (scripts/peers.sh); closing
# line "N passed, N failed". KEEP=1 keeps the work folder.
set -uo pipefail
build=${BUILD:-build}
dump=$build/hf_pretok_dump
peers=$build/peers
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

[ -x "$dump" ] || make -s --no-print-directory BUILD="$build" "$dump" >&2 || { fail "build $dump"; finish; }
[ -f "$peers/corpus.mjs" ] || BUILD="$build" scripts/peers.sh >/dev/null || { fail "peers"; finish; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT; [ -n "${KEEP:-}" ] && trap - EXIT
corpus=$peers/corpus.jsonl
[ -s "$corpus" ] || node "$peers/corpus.mjs" "$peers/node_modules" > "$corpus" || { fail "corpus"; finish; }
{ awk 'NR % 39 == 0' "$corpus"; tail -n 22 "$corpus"; } > "$dir/sample.jsonl"
awk 'NR % 5 == 0' "$dir/sample.jsonl" > "$dir/small.jsonl" # for the regex features

split() { # pattern kind ("String"/"Regex"), pattern JSON string, behavior, invert
  printf '{"type":"Split","pattern":{"%s":%s},"behavior":"%s","invert":%s}' "$1" "$2" "$3" "$4"
}
qwen='"(?i:'"'"'s|'"'"'t|'"'"'re|'"'"'ve|'"'"'m|'"'"'ll|'"'"'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"'
llama='"(?i:'"'"'s|'"'"'t|'"'"'re|'"'"'ve|'"'"'m|'"'"'ll|'"'"'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"'
o200k='"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'"'"'s|'"'"'t|'"'"'re|'"'"'ve|'"'"'m|'"'"'ll|'"'"'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'"'"'s|'"'"'t|'"'"'re|'"'"'ve|'"'"'m|'"'"'ll|'"'"'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"'
bl='{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}'
# DeepSeek V3's: General_Category and code point ranges in classes.
deepseek=$(cat <<'JSON'
{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\p{N}{1,3}"},"behavior":"Isolated","invert":false},{"type":"Split","pattern":{"Regex":"[一-龥぀-ゟ゠-ヿ]+"},"behavior":"Isolated","invert":false},{"type":"Split","pattern":{"Regex":"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]}
JSON
)
# BLOOM's: a class nested in a negated class (Oniguruma's union).
bloom='{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":" ?[^(\\s|[.,!?…。，、।۔،])]+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]}'
cases=(
  "deepseek-v3|$deepseek"
  "bloom|$bloom"
  "split-scripts|$(split Regex '"\\p{Han}+|\\p{Hiragana}|\\p{katakana}+|\\p{^Latin}\\p{Cyrillic}|[\\p{Zs}\\p{Cf}]|\\P{Cn}\\p{Co}"' Isolated false)"
  "qwen3|{\"type\":\"Sequence\",\"pretokenizers\":[$(split Regex "$qwen" Isolated false),$bl]}"
  "llama3.1|{\"type\":\"Sequence\",\"pretokenizers\":[$(split Regex "$llama" Isolated false),$bl]}"
  "gpt-4o|{\"type\":\"Sequence\",\"pretokenizers\":[$(split Regex "$o200k" Isolated false),$bl]}"
  "gemma3|$(split String '" "' MergedWithPrevious false)"
  "llama2|null"
  "bytelevel-gpt2|{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}"
  "bytelevel-then-split|{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true},$(split Regex '"\\p{L}+|Ġ"' Isolated false)]}"
  "split-removed|$(split Regex '"\\s+"' Removed false)"
  "split-next|$(split Regex '"[.,;:!?]"' MergedWithNext false)"
  "split-contiguous-invert|$(split Regex '"\\p{N}+|\\w"' Contiguous true)"
  "split-empty-matches|$(split Regex '"a*|\\d"' Isolated false)"
  "split-anchors|$(split Regex '"^ +| +$|\\n|\\A.|.\\Z|\\S\\z|\\x{41}\\u0042"' Removed false)"
  "split-caseless|$(split Regex '"(?i:[a-z]+|ǆ)|(?i)[θ-ω]"' Isolated false)"
  "split-previous-invert|$(split String '" "' MergedWithPrevious true)"
  "split-then-bytelevel-prefix|{\"type\":\"Sequence\",\"pretokenizers\":[$(split Regex '"\\p{N}+"' Isolated false),{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":false,\"use_regex\":false}]}"
  "punctuation-next|{\"type\":\"Punctuation\",\"behavior\":\"MergedWithNext\"}"
  "metaspace-older-form|{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"add_prefix_space\":true}"
  "metaspace|{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"always\",\"split\":true}"
  "metaspace-first-nosplit|{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"first\",\"split\":false}"
  "digits|{\"type\":\"Digits\",\"individual_digits\":false}"
  "digits-individual|{\"type\":\"Digits\",\"individual_digits\":true}"
  "punctuation|{\"type\":\"Punctuation\",\"behavior\":\"Contiguous\"}"
  "whitespace|{\"type\":\"Whitespace\"}"
  "whitespace-split|{\"type\":\"WhitespaceSplit\"}"
)
# Regex features Oniguruma and PCRE2 share, and Oniguruma's reading of
# \w \d \s \h \v {,n} and (?m) (Split, Isolated).
while IFS= read -r re; do
  cases+=("regex ${re//|/ OR }|$(node -e 'console.log(JSON.stringify({type: "Split",
    pattern: {Regex: process.argv[1]}, behavior: "Isolated", invert: false}))' "$re")")
done <<'PATTERNS'
\w+?x|.
(?>a+)b|a
(?<=\s)\S+
(\p{L})\1
(?<w>\p{N})\k<w>
(?x) \p{L} + # letters
a{2,}?|b{,3}|\h+
(?i)[^a-z\s]+
\d+(?:[.,]\d+)*
\t|\n|\r|\f|\e|\a|\x41|\v
(?m).+|\A\s*\S|\s+\z
\p{N}{1,3}+|\p{L}{2}+|[ab]{2}+c|(?:ab){1,2}+|a{,2}+|a++b|\s?+\S
(?i)\p{Lu}+|(?i)[\p{Ll}\d]|(?i)\P{Ll}\s|(?i:\w)\W
PATTERNS
pairs=() small=()
k=0
for c in "${cases[@]}"; do
  name=${c%%|*} pre=${c#*|} file=$dir/case$((k += 1)) input=sample
  case $name in "regex "*) input=small ;; esac
  printf '{"pre_tokenizer":%s}\n' "$pre" > "$file.json"
  modes=scanners
  case $name in qwen3 | llama3.1 | gpt-4o | bytelevel-gpt2) modes="scanners pcre2" ;; esac
  for mode in $modes; do
    flag=; [ $mode = pcre2 ] && flag=--pcre2
    if ! "$dump" $flag "$file.json" < "$dir/$input.jsonl" > "$file.$mode.jsonl" 2> "$dir/err"; then
      fail "$name ($mode)" "$(head -c 300 "$dir/err")"
    elif [ $input = small ]; then
      small+=("$name ($mode)" "$file.json" "$file.$mode.jsonl")
    else
      pairs+=("$name ($mode)" "$file.json" "$file.$mode.jsonl")
    fi
  done
done
for input in sample small; do
  if [ $input = small ]; then set -- "${small[@]}"; else set -- "${pairs[@]}"; fi
  node tests/tools/hf_pretok_reference.mjs "$peers/node_modules" "$dir/$input.jsonl" "$@" > "$dir/verdicts" 2>&1
  [ $(($# / 3)) -eq "$(grep -c -e '^ok   ' -e '^FAIL ' "$dir/verdicts")" ] || fail "the reference" "$(head -c 500 "$dir/verdicts")"
  while IFS= read -r line; do
    case $line in
      "ok   "*) ok "${line#ok   }" ;;
      "FAIL "*) fail "${line#FAIL }" ;;
    esac
  done < "$dir/verdicts"
done
finish
