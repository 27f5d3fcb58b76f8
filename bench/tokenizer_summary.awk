# The tokenizer benchmark's table rows for one encoding (bench/tokenizer.sh).
# Reads ordo-0.txt .. ordo-A.txt (build/bench_tokenizer) and peers-1.txt ..
# peers-A.txt (bench/tokenizer_peers.mjs), run alternately: ordo, peers,
# ordo, peers, ... ordo. Variables: n (the encoding or tokenizer.json
# label), main (the peer ordo is held to: tiktoken or tokenizers), A (the
# number of peer runs), hf (1: the tokenizer.json table's columns).
#
# ordo's MB/s and tokens/s: the median of all its rounds. The ratio: for
# each peer run, the median of the rounds of the ordo runs just before and
# after it over that peer run's median, so each ratio compares runs made
# under the same load; the figure is the median of the A ratios, and every
# one is listed (so it is not ordo's column over the peer's). Other peers
# (first peer run only) against the main peer's median of that run.
function median(v, k,    i, j, t) {
    for (i = 2; i <= k; i++) {
        t = v[i]
        for (j = i - 1; j >= 1 && v[j] > t; j--)
            v[j + 1] = v[j]
        v[j + 1] = t
    }
    return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
FNR == 1 {
    f = FILENAME
    sub(/.*\//, "", f)
    kind = substr(f, 1, index(f, "-") - 1)
    run = substr(f, index(f, "-") + 1) + 0
}
kind == "ordo" && $1 == n && $2 == "round" {
    rounds[run]++
    mb[run, rounds[run]] = $4
    all_mb[++all] = $4
    all_tp[all] = $6
}
kind == "ordo" && $1 == "median" && $2 == n { ordo_tokens = $5 }
kind == "peers" && $1 == "median" && $3 == n {
    if ($2 == main) {
        peer_mb[run] = $4
        peer_tp[run] = $5
        peers++
        if (run == 1)
            split($0, first)
    } else if (run == 1)
        other[++others] = $0
}
# One row: the tokenizer.json table has a tokens column, the other does not.
function row(name, tok, mbs, tps, ratio, tokens, agree, each) {
    if (hf)
        printf "%-14s %-15s %9.2f %13.0f %12.2fx %10s %8s%s\n", name, tok, mbs, tps, ratio, tokens, agree, each
    else
        printf "%-12s %-11s %9.2f %13.0f %9.2fx %8s%s\n", name, tok, mbs, tps, ratio, agree, each
}
END {
    if (all == 0 || peers != A) {
        printf "%s: %d ordo rounds and %d of %d %s runs found\n", n, all, peers, A, main > "/dev/stderr"
        exit 1
    }
    for (i = 0; i <= A; i++)
        if (!rounds[i]) {
            printf "%s: no ordo rounds in ordo-%d.txt\n", n, i > "/dev/stderr"
            exit 1
        }
    each = ""
    for (i = 1; i <= A; i++) {
        k = 0
        split("", v)
        for (c = 1; c <= rounds[i - 1]; c++) v[++k] = mb[i - 1, c]
        for (c = 1; c <= rounds[i]; c++) v[++k] = mb[i, c]
        ratio[i] = median(v, k) / peer_mb[i]
        each = each sprintf("%s%.2f", i > 1 ? " " : "", ratio[i])
        pmbs[i] = peer_mb[i]
        ptps[i] = peer_tp[i]
    }
    row(n, "ordo", median(all_mb, all), median(all_tp, all), median(ratio, A), ordo_tokens, "-",
        "  (each run: " each ")")
    row(n, main, median(pmbs, A), median(ptps, A), 1, first[6], hf ? "-" : first[7] "%", "")
    for (o = 1; o <= others; o++) {
        split(other[o], x)
        row(n, x[2], x[4], x[5], x[4] / first[4], x[6], x[7] "%", "")
    }
}
