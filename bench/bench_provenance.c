/*
 * bench_provenance: what regenerating one recorded step's batch costs
 * (ordo_batch_provenance), from the flush epoch's lane state against the
 * checkpoint-only replay, in the same run.
 *
 * Takes a ledger and a run recorded by `ordo run` (bench/provenance.sh
 * records a 10,000-step run checkpointed every 500 steps), picks --count
 * steps at random (fixed seed) and regenerates each --rounds times; then
 * does the same on a copy of the ledger without its lane states (only the
 * checkpoints), the way a run recorded before migration 0007 replays.
 * Prints per mode the median and the 90th percentile over steps of each
 * step's median time, the steps replayed (step - from_step), and the
 * ratio of the medians.
 *
 *   bench_provenance --db FILE --run NAME [--count N] [--rounds R]
 *                    [--data-root DIR] [--modes both|epoch]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ordo.h"

#define MAX_STEPS 256
#define MAX_ROUNDS 15

typedef struct {
    const char *db, *run, *data_root;
    int count, rounds;
    int epoch_only; /* --modes epoch: no checkpoint-only replay (for profiling) */
} options;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[(int)(q * (n - 1) + 0.5)];
}

static int die(const char *what, const ordo_error *err)
{
    fprintf(stderr, "bench_provenance: %s: %s\n", what, err ? err->message : "");
    exit(1);
}

typedef struct {
    double median_ms, p90_ms, max_ms, replayed;
    const char *from;
} figures;

/* Regenerates each step `rounds` times; the per-step medians summarised. */
static figures measure(const options *o, const char *db, const int64_t *steps)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ordo_run_info run;
    if (ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err) != ORDO_OK)
        die(db, &err);
    if (ordo_run_get(ledger, o->run, &run, &err) != ORDO_OK)
        die(o->run, &err);
    double per_step[MAX_STEPS], replayed[MAX_STEPS];
    figures f = {0};
    for (int i = 0; i < o->count; i++) {
        double t[MAX_ROUNDS];
        for (int r = 0; r < o->rounds; r++) {
            ordo_provenance *p = NULL;
            double start = now_ms();
            if (ordo_batch_provenance(ledger, run.id, steps[i], o->data_root, &p, &err) != ORDO_OK)
                die("regenerating", &err);
            t[r] = now_ms() - start;
            replayed[i] = (double)(p->step - p->from_step);
            f.from = p->from;
            ordo_provenance_free(p);
        }
        per_step[i] = quantile(t, o->rounds, 0.5);
        if (per_step[i] > f.max_ms)
            f.max_ms = per_step[i];
    }
    ordo_ledger_close(ledger);
    f.replayed = quantile(replayed, o->count, 0.5);
    f.p90_ms = quantile(per_step, o->count, 0.9);
    f.median_ms = quantile(per_step, o->count, 0.5);
    return f;
}

/* A copy of the ledger without lane states: checkpoints alone (sqlite3's
 * own backup, then the table emptied). */
static void checkpoints_only(const char *db, char *copy, size_t size)
{
    snprintf(copy, size, "%s.checkpoints-only", db);
    remove(copy);
    char sql[8400];
    snprintf(sql, sizeof sql,
             "sqlite3 '%s' \".backup '%s'\" && sqlite3 '%s' 'DELETE FROM epoch_states'", db, copy,
             copy);
    if (system(sql) != 0)
        die("copying the ledger without its lane states (sqlite3)", NULL);
}

int main(int argc, char **argv)
{
    options o = {.count = 20, .rounds = 3};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--db"))
            o.db = argv[i + 1];
        else if (!strcmp(argv[i], "--run"))
            o.run = argv[i + 1];
        else if (!strcmp(argv[i], "--data-root"))
            o.data_root = argv[i + 1];
        else if (!strcmp(argv[i], "--count"))
            o.count = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            o.rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--modes"))
            o.epoch_only = !strcmp(argv[i + 1], "epoch")  ? 1
                           : !strcmp(argv[i + 1], "both") ? 0
                                                          : -1;
        else
            return fprintf(stderr, "bench_provenance: unknown option '%s'\n", argv[i]), 2;
    }
    if (!o.db || !o.run || o.count < 1 || o.count > MAX_STEPS || o.rounds < 1 ||
        o.rounds > MAX_ROUNDS || o.epoch_only < 0)
        return fprintf(stderr,
                       "usage: bench_provenance --db FILE --run NAME [--count 1..%d] "
                       "[--rounds 1..%d] [--data-root DIR] [--modes both|epoch]\n",
                       MAX_STEPS, MAX_ROUNDS),
               2;
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ordo_run_info run;
    if (ordo_ledger_open(o.db, ORDO_OPEN_READONLY, &ledger, &err) != ORDO_OK ||
        ordo_run_get(ledger, o.run, &run, &err) != ORDO_OK)
        die(o.db, &err);
    ordo_ledger_close(ledger);
    int64_t steps[MAX_STEPS];
    uint64_t x = 2026;
    for (int i = 0; i < o.count; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        steps[i] = 1 + (int64_t)((x >> 33) % (uint64_t)run.last_step);
    }
    figures epoch = measure(&o, o.db, steps);
    printf("batch provenance: %d random steps of run '%s' (%lld steps), median of %d rounds each\n",
           o.count, o.run, (long long)run.last_step, o.rounds);
    printf("  %-28s median %8.1f ms  p90 %8.1f ms  max %8.1f ms  steps replayed (median) %6.0f\n",
           "from the epoch's lane state", epoch.median_ms, epoch.p90_ms, epoch.max_ms,
           epoch.replayed);
    if (o.epoch_only)
        return 0;
    char copy[4096];
    checkpoints_only(o.db, copy, sizeof copy);
    figures ckpt = measure(&o, copy, steps);
    remove(copy);
    printf("  %-28s median %8.1f ms  p90 %8.1f ms  max %8.1f ms  steps replayed (median) %6.0f\n",
           "from checkpoints only", ckpt.median_ms, ckpt.p90_ms, ckpt.max_ms, ckpt.replayed);
    printf("  checkpoints only / epoch lane state: %.1fx (medians)\n",
           ckpt.median_ms / epoch.median_ms);
    printf("{\"bench\":\"provenance\",\"steps\":%d,\"epoch_median_ms\":%.2f,\"epoch_p90_ms\":%.2f,"
           "\"checkpoint_median_ms\":%.2f,\"checkpoint_p90_ms\":%.2f,\"ratio\":%.2f}\n",
           o.count, epoch.median_ms, epoch.p90_ms, ckpt.median_ms, ckpt.p90_ms,
           ckpt.median_ms / epoch.median_ms);
    return 0;
}
