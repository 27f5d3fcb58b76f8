/* Heavy reads (compare, audit, the dashboard's views) are answered by a
 * few workers of their own, never on the connection threads: the
 * connection is suspended while its answer is built and rendered, so
 * health checks and writes are never queued behind a comparison of two
 * million-step runs. At most HEAVY_QUEUE heavy requests are queued or
 * running (a dashboard page asks for a comparison per run at once); the
 * next one is refused with 503 and Retry-After at once, and so is one that
 * waited HEAVY_MAX_WAIT seconds for a worker (or is still queued when the
 * server stops). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "server.h"

#define HEAVY_QUEUE 32    /* heavy requests queued or running, at most */
#define HEAVY_MAX_WAIT 20 /* seconds a request may wait for a worker */

static double monotonic(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The answer of a request that waited too long, or came while the server
 * stops: a 503 now rather than a late answer nobody waits for. */
static response too_late(double waited)
{
    response out = json_error(503, "busy",
                              "waited %.0f s for one of the workers that answer "
                              "heavy reads; try again",
                              waited);
    out.retry_after = 1;
    return out;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, idle = PTHREAD_COND_INITIALIZER;
static request *queue_head, *queue_tail; /* linked through request.heavy_next */
static pthread_t *workers;
static int worker_count, capacity, admitted, stopping, closed;

static void *work_loop(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!queue_head && !stopping)
            pthread_cond_wait(&work, &lock);
        if (!queue_head)
            break;
        request *req = queue_head;
        queue_head = req->heavy_next;
        if (!queue_head)
            queue_tail = NULL;
        int late = closed;
        pthread_mutex_unlock(&lock);
        double waited = monotonic() - req->heavy_queued;
        response out;
        if (late || waited > HEAVY_MAX_WAIT)
            out = too_late(waited);
        else
            server_route(req, &out);
        server_render(&out); /* the large text is built here too, not on the connection */
        req->heavy_out = out;
        req->heavy_done = 1;
        MHD_resume_connection(req->connection);
        pthread_mutex_lock(&lock);
        if (--admitted == 0)
            pthread_cond_broadcast(&idle);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Starts the workers; see server.h. */
int heavy_start(int count)
{
    workers = calloc((size_t)count, sizeof *workers);
    if (!workers)
        return -1;
    stopping = closed = 0;
    capacity = HEAVY_QUEUE > 2 * count ? HEAVY_QUEUE : 2 * count;
    for (worker_count = 0; worker_count < count; worker_count++)
        if (pthread_create(&workers[worker_count], NULL, work_loop, NULL) != 0)
            return -1;
    return 0;
}

/* Hands a complete heavy request to the workers; see server.h. */
int heavy_submit(request *req)
{
    pthread_mutex_lock(&lock);
    int room = !closed && admitted < capacity;
    if (room)
        admitted++;
    pthread_mutex_unlock(&lock);
    if (!room)
        return -1;
    /* suspended before any worker can see it, so its resume always
     * follows this suspend */
    MHD_suspend_connection(req->connection);
    pthread_mutex_lock(&lock);
    req->heavy_next = NULL;
    req->heavy_queued = monotonic();
    if (queue_tail)
        queue_tail->heavy_next = req;
    else
        queue_head = req;
    queue_tail = req;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&lock);
    return 0;
}

/* The most heavy requests queued or running at once; see server.h. */
int heavy_capacity(void)
{
    return capacity;
}

/* Refuses new heavy requests and waits until none is queued or running;
 * see server.h. */
void heavy_close(void)
{
    pthread_mutex_lock(&lock);
    closed = 1;
    while (admitted > 0)
        pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
}

/* Stops and joins the workers; see server.h. */
void heavy_stop(void)
{
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_broadcast(&work);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < worker_count; i++)
        pthread_join(workers[i], NULL);
    free(workers);
    workers = NULL;
    worker_count = 0;
}
