/* Fuzzes reading a recovery manifest back (ordo_recovery_manifest_read),
 * past its SHA-256: a real manifest of a small run is made once (with the
 * ordo binary, $ORDO_BIN, and the library), then each input is either read
 * as it is, or, when it is a JSON object, laid over that manifest (its
 * fields replace the manifest's) and re-signed the way the format says, so
 * the fields' checks, the recipe, the checkpoint state and the expected
 * digests are what the fuzzer reaches. A read that succeeds must hand back
 * a manifest whose run is the ledger's and whose state is non-empty. */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE   /* mkdtemp */
#include <ftw.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ordo.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

extern char **environ;
static char dir[64];
static ordo_ledger *ledger;
static json_t *base;

static void run(const char *const *args)
{
    pid_t pid;
    int status = 0;
    if (posix_spawn(&pid, args[0], NULL, NULL, (char *const *)args, environ) != 0 ||
        waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fuzz_manifest: setup command %s %s failed\n", args[0], args[1]);
        abort();
    }
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path), 0;
}

/* The folder goes when the fuzzer exits. */
static void clean_up(void)
{
    ordo_ledger_close(ledger);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A run of 4 steps at world size 2 with checkpoints at 2 and 4. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *bin = getenv("ORDO_BIN");
    snprintf(dir, sizeof dir, "/tmp/ordo-fuzz-manifest-XXXXXX");
    if (!bin || !mkdtemp(dir))
        return fprintf(stderr, "fuzz_manifest: needs ORDO_BIN\n"), abort(), 0;
    atexit(clean_up);
    char path[256], db[256], recipe[256], out[256];
    snprintf(path, sizeof path, "%s/raw.jsonl", dir);
    char docs[4096] = "";
    for (int i = 0; i < 40; i++)
        snprintf(docs + strlen(docs), sizeof docs - strlen(docs),
                 "{\"text\": \"document %d of a small corpus, made long enough\"}\n", i);
    write_text(path, docs);
    snprintf(out, sizeof out, "%s/data", dir);
    run((const char *const[]){bin, "shard", "--out", out, "--docs-per-frame", "4", path, NULL});
    snprintf(recipe, sizeof recipe, "%s/recipe.json", dir);
    write_text(recipe, "{\"name\": \"fuzz\", \"seed\": 7, \"seq_len\": 16, \"global_batch\": 8,"
                       " \"lanes\": 4, \"flush_every\": 3, \"shuffle\": true,"
                       " \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": [{\"name\": \"a\","
                       " \"paths\": [\"data/*.jsonl.zst\"], \"weight\": 1}]}");
    snprintf(db, sizeof db, "%s/ledger.db", dir);
    run((const char *const[]){bin, "run", recipe, "--db", db, "--name", "base", "--world-size", "2",
                              "--steps", "4", "--checkpoint-every", "2", "--quiet", NULL});
    ordo_error err;
    char *text = NULL;
    ordo_run_info run_info;
    if (ordo_ledger_open(db, 0, &ledger, &err) != ORDO_OK ||
        ordo_run_get(ledger, "base", &run_info, &err) != ORDO_OK ||
        ordo_recovery_manifest(ledger, run_info.id, 4, 2, 2, &text, &err) != ORDO_OK)
        return fprintf(stderr, "fuzz_manifest: %s\n", err.message), abort(), 0;
    base = json_loads(text, 0, NULL);
    ordo_free(text);
    return base ? 0 : (abort(), 0);
}

/* The manifest's text with "sha256" set as the format defines it: the
 * SHA-256 of its compact, key-sorted text without that field. */
static char *signed_text(json_t *m)
{
    json_object_del(m, "sha256");
    char *bare = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    if (!bare)
        return NULL;
    unsigned char digest[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_sha256(bare, strlen(bare), digest);
    ordo_digest_to_hex(digest, hex);
    free(bare);
    json_object_set_new(m, "sha256", json_string(hex));
    return json_dumps(m, JSON_COMPACT);
}

static void read_back(const char *text, size_t len)
{
    ordo_manifest *m = NULL;
    ordo_error err;
    if (ordo_recovery_manifest_read(ledger, text, len, dir, &m, &err) == ORDO_OK) {
        if (!m || strcmp(m->run.name, "base") != 0 || !m->checkpoint.state ||
            !m->checkpoint.state_size || !m->recipe)
            abort(); /* what a read accepts is a usable manifest */
    } else if (m || !err.message[0]) {
        abort(); /* a refusal hands nothing back and says why */
    }
    ordo_manifest_free(m);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    read_back((const char *)data, size);
    json_t *patch = json_loadb((const char *)data, size, 0, NULL);
    if (json_is_object(patch)) {
        json_t *m = json_deep_copy(base);
        json_object_update(m, patch);
        char *text = signed_text(m);
        if (text)
            read_back(text, strlen(text));
        free(text);
        json_decref(m);
    }
    json_decref(patch);
    return 0;
}
