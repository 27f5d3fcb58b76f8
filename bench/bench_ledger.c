/*
 * bench_ledger: steps recorded per second through libordo's ledger API,
 * against the ceiling of a raw SQLite insert of the same bytes into a bare
 * table, measured in the same process, alternating, median of rounds.
 *
 *   bench_ledger [--steps N] [--rounds R] [--dir DIR]
 *
 * Each step carries 32 lane digests and its batch digest (1,056 bytes),
 * made before timing; the ledger's own check that the batch digest is the
 * digest of the lane digests is part of its cost. Both sides write
 * batches of 1,000 steps per transaction into a fresh
 * file with the same settings (WAL, synchronous=NORMAL, 16 KiB pages),
 * alternating batch by batch; wall and process CPU time (helper threads
 * included) are summed per side.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ordo.h"

#define LANES 32
#define BATCH 1000

typedef struct {
    long steps;
    int rounds;
    const char *dir;
} options;

static void die(const char *what, const char *message)
{
    fprintf(stderr, "bench_ledger: %s: %s\n", what, message);
    exit(1);
}

static void remove_db(const char *path)
{
    char extra[4200];
    unlink(path);
    snprintf(extra, sizeof extra, "%s-wal", path);
    unlink(extra);
    snprintf(extra, sizeof extra, "%s-shm", path);
    unlink(extra);
}

static double file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size : 0.0;
}

/* Lane and batch digests of every step, made before timing starts. */
static unsigned char *make_lanes(long steps, unsigned char **batches)
{
    unsigned char *lanes = malloc((size_t)steps * LANES * ORDO_DIGEST_SIZE);
    *batches = malloc((size_t)steps * ORDO_DIGEST_SIZE);
    if (!lanes || !*batches)
        die("memory", "cannot allocate digests");
    for (long s = 0; s < steps; s++) {
        unsigned char *mine = lanes + (size_t)s * LANES * ORDO_DIGEST_SIZE;
        for (int l = 0; l < LANES; l++) {
            long key[2] = {s, l};
            ordo_sha256(key, sizeof key, mine + (size_t)l * ORDO_DIGEST_SIZE);
        }
        ordo_batch_digest(mine, LANES, *batches + (size_t)s * ORDO_DIGEST_SIZE);
    }
    return lanes;
}

typedef struct {
    double wall, cpu; /* seconds spent inside this side's batches */
} timing;

static void clock_pair(double *wall, double *cpu)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    *wall = (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); /* includes helper threads */
    *cpu = (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void add_elapsed(timing *t, double wall0, double cpu0)
{
    double wall1, cpu1;
    clock_pair(&wall1, &cpu1);
    t->wall += wall1 - wall0;
    t->cpu += cpu1 - cpu0;
}

typedef struct {
    ordo_ledger *ledger;
    int64_t run;
    ordo_step *batch;
} ordo_side;

static void open_ordo(const char *path, ordo_side *side)
{
    remove_db(path);
    ordo_error err;
    if (ordo_ledger_open(path, 0, &side->ledger, &err) != ORDO_OK)
        die("open", err.message);
    const char recipe[] = "{\"name\":\"bench\",\"lanes\":32}";
    char id[ORDO_DIGEST_HEX_SIZE];
    int64_t segment = 0;
    int ranks[LANES];
    for (int l = 0; l < LANES; l++)
        ranks[l] = l % 8;
    ordo_run_spec spec = {.name = "bench", .recipe_id = id, .lanes = LANES};
    ordo_segment_spec seg = {.world_size = 8, .start_step = 1, .lanes = LANES, .lane_ranks = ranks};
    if (ordo_recipe_put(side->ledger, recipe, sizeof recipe - 1, id, &err) ||
        ordo_run_create(side->ledger, &spec, &side->run, &err) ||
        ordo_segment_add(side->ledger, side->run, &seg, &segment, &err))
        die("setup", err.message);
    side->batch = calloc(BATCH, sizeof *side->batch);
    if (!side->batch)
        die("memory", "cannot allocate a batch");
}

/* One batch through the ledger API; only the call itself is timed. */
static void ledger_batch(ordo_side *side, const unsigned char *lanes, const unsigned char *batches,
                         long first, long n, timing *t)
{
    for (long i = 0; i < n; i++) {
        ordo_step *s = &side->batch[i];
        ordo_step_init(s, first + i + 1);
        s->lane_digests = lanes + (size_t)(first + i) * LANES * ORDO_DIGEST_SIZE;
        s->lane_count = LANES;
        memcpy(s->batch_digest, batches + (size_t)(first + i) * ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE);
    }
    double wall0, cpu0;
    clock_pair(&wall0, &cpu0);
    ordo_record_result result;
    ordo_error err;
    if (ordo_steps_record(side->ledger, side->run, side->batch, (size_t)n, &result, &err) !=
        ORDO_OK)
        die("record", err.message);
    add_elapsed(t, wall0, cpu0);
    if (result.inserted != (size_t)n)
        die("record", "not every step was inserted");
}

static void raw_exec(sqlite3 *db, const char *sql)
{
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK)
        die(sql, message ? message : "?");
}

static sqlite3 *open_raw(const char *path, sqlite3_stmt **stmt)
{
    remove_db(path);
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die("open", sqlite3_errmsg(db));
    raw_exec(db, "PRAGMA page_size = 16384; PRAGMA journal_mode = WAL; "
                 "PRAGMA synchronous = NORMAL; "
                 "CREATE TABLE raw (run_id INTEGER, step INTEGER, batch BLOB, lanes BLOB)");
    if (sqlite3_prepare_v2(db, "INSERT INTO raw VALUES (1, ?1, ?2, ?3)", -1, stmt, NULL))
        die("prepare", sqlite3_errmsg(db));
    return db;
}

/* The same bytes with plain SQLite: one transaction, a reused statement. */
static void raw_batch(sqlite3 *db, sqlite3_stmt *stmt, const unsigned char *lanes,
                      const unsigned char *batches, long first, long n, timing *t)
{
    double wall0, cpu0;
    clock_pair(&wall0, &cpu0);
    raw_exec(db, "BEGIN IMMEDIATE");
    for (long i = 0; i < n; i++) {
        sqlite3_bind_int64(stmt, 1, first + i + 1);
        sqlite3_bind_blob(stmt, 2, batches + (size_t)(first + i) * ORDO_DIGEST_SIZE,
                          ORDO_DIGEST_SIZE, SQLITE_STATIC);
        sqlite3_bind_blob(stmt, 3, lanes + (size_t)(first + i) * LANES * ORDO_DIGEST_SIZE,
                          LANES * ORDO_DIGEST_SIZE, SQLITE_STATIC);
        if (sqlite3_step(stmt) != SQLITE_DONE)
            die("raw insert", sqlite3_errmsg(db));
        sqlite3_reset(stmt);
    }
    raw_exec(db, "COMMIT");
    add_elapsed(t, wall0, cpu0);
}

/* One round: both files fresh, batches alternating between them so both
 * sides see the same machine conditions. */
static void round_trip(const options *o, const char *ordo_path, const char *raw_path,
                       const unsigned char *lanes, const unsigned char *batches, timing *ordo_t,
                       timing *raw_t, double *ordo_bytes, double *raw_bytes)
{
    ordo_side side = {0};
    open_ordo(ordo_path, &side);
    sqlite3_stmt *stmt = NULL;
    sqlite3 *db = open_raw(raw_path, &stmt);
    for (long first = 0; first < o->steps; first += BATCH) {
        long n = o->steps - first < BATCH ? o->steps - first : BATCH;
        if ((first / BATCH) % 2 == 0) {
            ledger_batch(&side, lanes, batches, first, n, ordo_t);
            raw_batch(db, stmt, lanes, batches, first, n, raw_t);
        } else {
            raw_batch(db, stmt, lanes, batches, first, n, raw_t);
            ledger_batch(&side, lanes, batches, first, n, ordo_t);
        }
    }
    free(side.batch);
    ordo_ledger_close(side.ledger); /* the last connection folds the WAL in */
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    *ordo_bytes = file_bytes(ordo_path) / (double)o->steps;
    *raw_bytes = file_bytes(raw_path) / (double)o->steps;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

static options parse(int argc, char **argv)
{
    options o = {200000, 5, "build/bench"};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            o.steps = atol(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            o.rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            o.dir = argv[++i];
        else {
            fprintf(stderr, "usage: bench_ledger [--steps N] [--rounds R] [--dir DIR]\n");
            exit(2);
        }
    }
    if (o.steps < BATCH || o.rounds < 1 || o.rounds > 99) {
        fprintf(stderr, "bench_ledger: need --steps >= %d and 1 <= --rounds <= 99\n", BATCH);
        exit(2);
    }
    return o;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    mkdir(o.dir, 0755);
    char ordo_path[4096], raw_path[4096];
    snprintf(ordo_path, sizeof ordo_path, "%s/ledger.db", o.dir);
    snprintf(raw_path, sizeof raw_path, "%s/raw.db", o.dir);
    unsigned char *batches = NULL;
    unsigned char *lanes = make_lanes(o.steps, &batches);
    double ordo_rate[99], raw_rate[99], ratio[99], cpu_ratio[99], ordo_bytes = 0, raw_bytes = 0;
    printf("ledger: %ld steps x %d lane digests, batches of %d, %d rounds, batches alternating\n",
           o.steps, LANES, BATCH, o.rounds);
    printf("%5s %14s %14s %11s %10s\n", "round", "ordo steps/s", "raw steps/s", "wall ratio",
           "cpu ratio");
    for (int r = 0; r < o.rounds; r++) {
        timing ordo_t = {0, 0}, raw_t = {0, 0};
        round_trip(&o, ordo_path, raw_path, lanes, batches, &ordo_t, &raw_t, &ordo_bytes,
                   &raw_bytes);
        ordo_rate[r] = (double)o.steps / ordo_t.wall;
        raw_rate[r] = (double)o.steps / raw_t.wall;
        ratio[r] = raw_t.wall / ordo_t.wall;
        cpu_ratio[r] = raw_t.cpu / ordo_t.cpu;
        printf("%5d %14.0f %14.0f %11.3f %10.3f\n", r + 1, ordo_rate[r], raw_rate[r], ratio[r],
               cpu_ratio[r]);
        fflush(stdout);
    }
    printf("median: ordo %.0f steps/s, raw %.0f steps/s, ratio %.3f (wall), %.3f (cpu)\n",
           median(ordo_rate, o.rounds), median(raw_rate, o.rounds), median(ratio, o.rounds),
           median(cpu_ratio, o.rounds));
    printf("bytes on disk per step: ordo %.1f, raw %.1f (payload %d)\n", ordo_bytes, raw_bytes,
           (LANES + 1) * ORDO_DIGEST_SIZE);
    remove_db(ordo_path);
    remove_db(raw_path);
    free(lanes);
    free(batches);
    return 0;
}
