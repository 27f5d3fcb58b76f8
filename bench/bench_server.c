/*
 * bench_server: the service under load on loopback, with its own C client.
 *   1. ingest: whole steps with 32 lane digests, 1000 steps a request, from
 *      1 and from 4 client connections at once: steps/s;
 *   2. recovery manifests and compares at 64 concurrent connections, pages
 *      of 1000 steps (32 lane digests each) at 8, the runs list at 64:
 *      requests/s and p50/p99 latency;
 *   3. compare of two 1,000,000-step runs: library call and over HTTP;
 *   4. lane reports, 64 lanes: one request of n reports from a rank owning
 *      every lane (n = 80,000 and 640,000), and 640,000 from each of two
 *      ranks (the first waits as pending reports, the second completes).
 *
 *   bench_server [--ordo build/ordo] [--dir DIR] [--seconds S] [--lanes-only 1]
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ordo.h"

static int port;
static char token[ORDO_TOKEN_SIZE];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_server: %s\n", what);
    exit(1);
}

/* One request on a fresh connection; returns the status, body in *out. */
static int request(const char *method, const char *path, const char *body, size_t body_len,
                   char **out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("cannot connect");
    char head[512];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %zu\r\n"
                     "Content-Type: application/json\r\nAuthorization: Bearer %s\r\n\r\n",
                     method, path, body_len, token);
    if (send(fd, head, (size_t)n, MSG_NOSIGNAL) != n)
        die("send");
    for (size_t sent = 0; sent < body_len;) {
        ssize_t k = send(fd, body + sent, body_len - sent, MSG_NOSIGNAL);
        if (k <= 0)
            die("send body");
        sent += (size_t)k;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t k;
    while ((k = recv(fd, buf + len, cap - len - 1, 0)) > 0) {
        len += (size_t)k;
        if (len + 1 >= cap)
            buf = realloc(buf, cap *= 2);
    }
    close(fd);
    buf[len] = '\0';
    int status = 0;
    sscanf(buf, "HTTP/1.%*d %d", &status);
    if (out)
        *out = buf;
    else
        free(buf);
    return status;
}

static pid_t start_server(const char *ordo, const char *db)
{
    int out[2];
    if (pipe(out) != 0)
        die("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2); /* the request log */
        execl(ordo, ordo, "serve", "--db", db, "--listen", "127.0.0.1:0", "--threads", "4",
              (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[256] = {0};
    for (size_t i = 0; i + 1 < sizeof line && read(out[0], line + i, 1) == 1 && line[i] != '\n';
         i++)
        ;
    close(out[0]);
    const char *at = strstr(line, "127.0.0.1:");
    if (!at)
        die("server did not start");
    port = atoi(at + 10);
    return pid;
}

/* A body of `count` whole steps from `first`, 32 lane digests each. */
static char *steps_body(int64_t first, int count, size_t *len)
{
    size_t cap = (size_t)count * (32 * 68 + 64) + 64;
    char *body = malloc(cap), *p = body;
    p += sprintf(p, "{\"steps\":[");
    for (int i = 0; i < count; i++) {
        p +=
            sprintf(p, "%s{\"step\":%lld,\"lane_digests\":[", i ? "," : "", (long long)(first + i));
        for (int l = 0; l < 32; l++)
            p += sprintf(p, "%s\"%056x%08x\"", l ? "," : "", (unsigned)(first + i), (unsigned)l);
        p += sprintf(p, "]}");
    }
    p += sprintf(p, "]}");
    *len = (size_t)(p - body);
    return body;
}

typedef struct {
    int64_t first;
    int requests;
} ingest_job;

static void *ingest_thread(void *arg)
{
    ingest_job *j = arg;
    char path[] = "/api/runs/load/steps";
    for (int r = 0; r < j->requests; r++) {
        size_t len;
        char *body = steps_body(j->first + (int64_t)r * 1000, 1000, &len);
        if (request("POST", path, body, len, NULL) != 200)
            die("ingest refused");
        free(body);
    }
    return NULL;
}

static double ingest(int clients, int requests_each, int64_t first)
{
    pthread_t threads[8];
    ingest_job jobs[8];
    double start = now();
    for (int c = 0; c < clients; c++) {
        jobs[c] = (ingest_job){first + (int64_t)c * requests_each * 1000, requests_each};
        pthread_create(&threads[c], NULL, ingest_thread, &jobs[c]);
    }
    for (int c = 0; c < clients; c++)
        pthread_join(threads[c], NULL);
    return (double)clients * requests_each * 1000 / (now() - start);
}

typedef struct {
    const char *path;
    double until;
    double *latencies;
    size_t count, cap, busy;
} reader_job;

static void *reader_thread(void *arg)
{
    reader_job *j = arg;
    while (now() < j->until) {
        double t = now();
        int status = request("GET", j->path, NULL, 0, NULL);
        if (status == 503) { /* over the heavy reads' admission bound: counted, not timed */
            j->busy++;
            continue;
        }
        if (status != 200) {
            fprintf(stderr, "bench_server: GET %s answered %d\n", j->path, status);
            exit(1);
        }
        if (j->count == j->cap)
            j->latencies =
                realloc(j->latencies, (j->cap = j->cap ? 2 * j->cap : 1024) * sizeof *j->latencies);
        j->latencies[j->count++] = now() - t;
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void readers(const char *what, const char *path, int connections, double seconds)
{
    pthread_t threads[64];
    reader_job jobs[64];
    double start = now();
    for (int c = 0; c < connections; c++) {
        jobs[c] = (reader_job){path, start + seconds, NULL, 0, 0, 0};
        pthread_create(&threads[c], NULL, reader_thread, &jobs[c]);
    }
    size_t total = 0, busy = 0;
    for (int c = 0; c < connections; c++) {
        pthread_join(threads[c], NULL);
        total += jobs[c].count;
        busy += jobs[c].busy;
    }
    if (total == 0)
        die("every read was refused");
    double elapsed = now() - start, *all = malloc(total * sizeof *all);
    size_t at = 0;
    for (int c = 0; c < connections; c++) {
        memcpy(all + at, jobs[c].latencies, jobs[c].count * sizeof *all);
        at += jobs[c].count;
        free(jobs[c].latencies);
    }
    qsort(all, total, sizeof *all, by_value);
    printf("  %-22s %4d connections: %8.0f requests/s, p50 %6.2f ms, p99 %6.2f ms", what,
           connections, (double)total / elapsed, 1e3 * all[total / 2],
           1e3 * all[(size_t)((double)total * 0.99)]);
    printf(busy ? ", %zu answered 503 busy\n" : "\n", busy);
    free(all);
}

/* Two runs of `steps` steps each, identical but for one step near the end,
 * recorded through the library. */
static void long_runs(ordo_ledger *ledger, const char *recipe_id, int64_t steps)
{
    int lane_ranks[32];
    for (int l = 0; l < 32; l++)
        lane_ranks[l] = l / 4;
    const char *names[2] = {"long-a", "long-b"};
    ordo_step *batch = malloc(1000 * sizeof *batch);
    unsigned char *lanes = malloc(1000 * 32 * 32);
    ordo_error err;
    for (int r = 0; r < 2; r++) {
        int64_t id;
        ordo_run_spec spec = {.name = names[r], .recipe_id = recipe_id, .lanes = 32};
        ordo_segment_spec seg = {
            .world_size = 8, .start_step = 1, .lanes = 32, .lane_ranks = lane_ranks};
        int64_t sid;
        if (ordo_run_create(ledger, &spec, &id, &err) != ORDO_OK ||
            ordo_segment_add(ledger, id, &seg, &sid, &err) != ORDO_OK)
            die(err.message);
        for (int64_t first = 1; first <= steps; first += 1000) {
            for (int i = 0; i < 1000; i++) {
                int64_t s = first + i;
                ordo_step_init(&batch[i], s);
                for (int l = 0; l < 32; l++) {
                    unsigned char *d = lanes + ((size_t)i * 32 + (size_t)l) * 32;
                    memset(d, 0, 32);
                    memcpy(d, &s, sizeof s);
                    d[31] = (unsigned char)l;
                    if (r == 1 && s == steps - 10)
                        d[30] = 1; /* the one divergent step */
                }
                batch[i].lane_digests = lanes + (size_t)i * 32 * 32;
                batch[i].lane_count = 32;
                ordo_batch_digest(batch[i].lane_digests, 32, batch[i].batch_digest);
            }
            if (ordo_steps_record(ledger, id, batch, 1000, NULL, &err) != ORDO_OK)
                die(err.message);
        }
    }
    free(batch);
    free(lanes);
}

/* {"rank":r,"lanes":[...]}: `count` reports of `rank`'s lanes (it owns
 * `owned` lanes from `first_lane`), step by step from step 1. */
static char *lanes_body(int rank, int first_lane, int owned, int count, size_t *len)
{
    size_t cap = (size_t)count * 112 + 64;
    char *body = malloc(cap), *p = body;
    if (!body)
        die("out of memory");
    p += sprintf(p, "{\"rank\":%d,\"lanes\":[", rank);
    for (int i = 0; i < count; i++) {
        int step = 1 + i / owned, lane = first_lane + i % owned;
        p += sprintf(p, "%s{\"step\":%d,\"lane\":%d,\"digest\":\"%056x%08x\"}", i ? "," : "", step,
                     lane, (unsigned)step, (unsigned)lane);
    }
    p += sprintf(p, "]}");
    *len = (size_t)(p - body);
    return body;
}

/* Posts one lanes body to `run`; returns the seconds it took. */
static double post_lanes(const char *run, int rank, int first_lane, int owned, int count)
{
    size_t len;
    char *body = lanes_body(rank, first_lane, owned, count, &len), *answer = NULL, path[256];
    snprintf(path, sizeof path, "/api/runs/%s/steps", run);
    double t = now();
    int status = request("POST", path, body, len, &answer);
    t = now() - t;
    if (status != 200) {
        fprintf(stderr, "%s\n", answer);
        die("lane reports refused");
    }
    free(answer);
    free(body);
    return t;
}

static void lane_reports(void)
{
    const char *recipe = "{\"name\":\"lanes\",\"lanes\":64,\"global_batch\":64}";
    char *answer = NULL, run[512], id[65] = "";
    if (request("POST", "/api/recipes", recipe, strlen(recipe), &answer) != 201)
        die("cannot post the recipe");
    const char *at = strstr(answer, "\"id\":\"");
    if (at)
        snprintf(id, sizeof id, "%.64s", at + 6);
    free(answer);
    printf("lane reports, 64 lanes, one request each:\n");
    const char *names[] = {"lanes-w1-small", "lanes-w1", "lanes-w2"};
    for (int r = 0; r < 3; r++) {
        snprintf(run, sizeof run, "{\"name\":\"%s\",\"recipe_id\":\"%s\",\"world_size\":%d}",
                 names[r], id, r == 2 ? 2 : 1);
        if (request("POST", "/api/runs", run, strlen(run), NULL) != 201)
            die("cannot create a lanes run");
    }
    double small = post_lanes(names[0], 0, 0, 64, 80000);
    double large = post_lanes(names[1], 0, 0, 64, 640000);
    printf("  1 rank owning all 64 lanes: %7d reports (%6d steps) %.2f s; %7d (%6d steps) %.2f s"
           "\n",
           80000, 1250, small, 640000, 10000, large);
    printf("  ratio for 8x the reports: %.1f (n log n: about 9.5, n^2: 64)\n", large / small);
    double pending = post_lanes(names[2], 0, 0, 32, 640000);
    double completing = post_lanes(names[2], 1, 32, 32, 640000);
    printf("  2 ranks of 32 lanes, 640,000 reports each (20,000 steps): the first (pending) "
           "%.2f s, the second (completing every step) %.2f s\n",
           pending, completing);
}

int main(int argc, char **argv)
{
    const char *ordo = "build/ordo", *dir = "build/bench/server";
    double seconds = 5;
    int lanes_only = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ordo"))
            ordo = argv[i + 1];
        else if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--lanes-only"))
            lanes_only = atoi(argv[i + 1]);
    }
    mkdir("build/bench", 0755);
    mkdir(dir, 0755);
    char db[4096];
    snprintf(db, sizeof db, "%s/server.db", dir);
    unlink(db);
    char side[4200];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    ordo_ledger *ledger = NULL;
    ordo_error err;
    char recipe_id[ORDO_DIGEST_HEX_SIZE];
    const char *recipe = "{\"name\":\"bench\",\"lanes\":32,\"global_batch\":256}";
    if (ordo_ledger_open(db, 0, &ledger, &err) != ORDO_OK ||
        ordo_token_create(ledger, "bench", ORDO_ROLE_WRITER, token, &err) != ORDO_OK ||
        ordo_recipe_put(ledger, recipe, strlen(recipe), recipe_id, &err) != ORDO_OK)
        die(err.message);
    if (lanes_only) {
        ordo_ledger_close(ledger);
        pid_t server = start_server(ordo, db);
        lane_reports();
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        return 0;
    }
    printf("compare of two 1,000,000-step runs (32 lanes; one divergent step):\n");
    double t = now();
    long_runs(ledger, recipe_id, 1000000);
    printf("  recorded both in %.1f s\n", now() - t);
    double times[5];
    ordo_compare_result r;
    ordo_run_info ra, rb;
    if (ordo_run_get(ledger, "long-a", &ra, &err) != ORDO_OK ||
        ordo_run_get(ledger, "long-b", &rb, &err) != ORDO_OK)
        die(err.message);
    for (int i = 0; i < 5; i++) {
        t = now();
        if (ordo_compare_runs(ledger, ra.id, rb.id, &r, &err) != ORDO_OK)
            die(err.message);
        times[i] = now() - t;
        if (r.diverged != 1 || r.steps_compared != 1000000)
            die("compare found the wrong thing");
        ordo_compare_result_free(&r);
    }
    qsort(times, 5, sizeof *times, by_value);
    printf("  library: median %.3f s (of 5)\n", times[2]);
    ordo_ledger_close(ledger);
    /* A real run with checkpoints, for the recovery manifests. */
    char corpus[4200], recipe_file[4200], cmd[16384];
    snprintf(corpus, sizeof corpus, "%s/docs.jsonl", dir);
    FILE *f = fopen(corpus, "w");
    for (int i = 0; f && i < 2000; i++)
        fprintf(f, "{\"text\":\"document %d %.*s\"}\n", i, 50 + i % 400,
                "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
                "incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis "
                "nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat "
                "duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore "
                "eu fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt "
                "in culpa qui officia deserunt mollit anim id est laborum");
    if (f)
        fclose(f);
    snprintf(recipe_file, sizeof recipe_file, "%s/recipe.json", dir);
    f = fopen(recipe_file, "w");
    if (f)
        fprintf(f, "{\"name\":\"real\",\"seed\":1,\"seq_len\":256,\"global_batch\":64,"
                   "\"lanes\":32,\"flush_every\":4,\"shuffle\": true,\"tokenizer\":"
                   "{\"kind\":\"bytes\"},\"sources\":[{\"name\":\"a\",\"paths\":"
                   "[\"docs.jsonl\"],\"weight\":1}]}\n"),
            fclose(f);
    snprintf(cmd, sizeof cmd,
             "%s run %s --db %s --name real --world-size 8 --steps 100 "
             "--checkpoint-every 10 --quiet",
             ordo, recipe_file, db);
    if (system(cmd) != 0)
        die("ordo run failed");
    pid_t server = start_server(ordo, db);
    for (int i = 0; i < 5; i++) {
        t = now();
        if (request("GET", "/api/compare?a=long-a&b=long-b", NULL, 0, NULL) != 200)
            die("compare refused");
        times[i] = now() - t;
    }
    qsort(times, 5, sizeof *times, by_value);
    printf("  over HTTP: median %.3f s (of 5)\n", times[2]);
    char run[256];
    snprintf(run, sizeof run, "{\"name\":\"load\",\"recipe_id\":\"%s\",\"world_size\":8}",
             recipe_id);
    if (request("POST", "/api/runs", run, strlen(run), NULL) != 201)
        die("cannot create the run");
    printf("ingest, 32 lane digests a step, 1000 steps a request:\n");
    int64_t next = 1;
    for (int clients = 1; clients <= 4; clients *= 4) {
        double rates[3];
        for (int round = 0; round < 3; round++) {
            rates[round] = ingest(clients, 20, next);
            next += (int64_t)clients * 20 * 1000;
        }
        qsort(rates, 3, sizeof *rates, by_value);
        printf("  %d client%s: median %.0f steps/s (of 3 rounds of %d steps)\n", clients,
               clients > 1 ? "s" : "", rates[1], clients * 20000);
    }
    lane_reports();
    printf("reads under load (%.0f s each):\n", seconds);
    readers("recovery manifest", "/api/runs/real/recovery?world_size=4", 64, seconds);
    readers("compare (1M steps)", "/api/compare?a=long-a&b=long-b", 64, seconds);
    readers("compare (short runs)", "/api/compare?a=load&b=load", 64, seconds);
    /* list answers built from the library's JSON views (2.4 MB a page) */
    readers("steps page (1000)", "/api/runs/load/steps?limit=1000", 8, seconds);
    readers("runs list", "/api/runs", 64, seconds);
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
    return 0;
}
