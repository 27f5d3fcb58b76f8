/* Small deterministic corpora and recipes for the loader tests. */
#ifndef ORDO_TEST_CORPUS_H
#define ORDO_TEST_CORPUS_H

#include "harness.h"

/* Writes `files` .jsonl files named PREFIX-N.jsonl into the test folder
 * `dir`, `docs` documents each, document lengths drawn between min_len and
 * max_len bytes (some multi-byte UTF-8), deterministic from `seed`. */
void corpus_jsonl(const char *dir, const char *prefix, int files, int docs, int min_len,
                  int max_len, unsigned seed);

/* Writes a recipe file `name` in the test folder; `sources` is the JSON of
 * the sources array; the other fields are given. Returns its path. */
const char *corpus_recipe(const char *name, int lanes, int global_batch, int seq_len,
                          int flush_every, int shuffle_window, const char *sources);

/* A copy of a test path that the next test_path calls leave alone (a ring
 * of 8 copies). */
const char *corpus_kept(const char *path);

/* A recipe of one source "a" over the test folder's data/ .jsonl files, with the
 * fields given; its path, kept. */
const char *corpus_one_source(int lanes, int global_batch, int seq_len, int flush_every,
                              int shuffle_window);

/* Runs the ordo binary and checks its exit code; returns its stdout (owned). */
char *ordo_ok(const char *const *args, int expected_code);

#endif
