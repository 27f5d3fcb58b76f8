/* Connections still sending a request: each gets a deadline that new
 * bytes do not extend — for its headers, then for its body (the header
 * deadline again plus a second per MiB declared) — and an address at its
 * connection limit makes room by losing its oldest such connection, so a
 * client that trickles headers or bodies on many connections cannot lock
 * others (of its address too) out.
 * libmicrohttpd's own timeout restarts with every byte, and its per-address
 * limit refuses the newcomer; this replaces both for the header phase. */
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server.h"

typedef struct tracked {
    struct tracked *prev, *next;
    MHD_socket fd;
    struct sockaddr_storage addr;
    double until;   /* when its current request must be in (monotonic seconds) */
    int in_headers; /* still reading a request (headers or body) */
    int dropped;    /* shut down by the guard: no longer counted */
} tracked;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static pthread_t reaper;
static tracked *head; /* oldest first */
static double deadline = 10;
static int per_address = 64;
static int stopping, started;
static atomic_llong dropped_total;

static double monotonic(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return 0;
}

/* Shuts a connection's socket (libmicrohttpd then sees it end and closes
 * it); the socket stays open until the CLOSED notice, which takes `lock`. */
static void drop(tracked *t)
{
    t->dropped = 1;
    shutdown(t->fd, SHUT_RDWR);
    atomic_fetch_add(&dropped_total, 1);
}

/* With the lock held: when the newcomer's address is over its limit, the
 * oldest of its connections still in its headers goes (the newcomer itself
 * when every other one is busy with a request). */
static void make_room(tracked *newcomer)
{
    int count = 0;
    tracked *oldest = NULL;
    for (tracked *t = head; t; t = t->next)
        if (!t->dropped && same_address(&t->addr, &newcomer->addr)) {
            count++;
            if (!oldest && t->in_headers)
                oldest = t;
        }
    if (count > per_address && oldest)
        drop(oldest);
}

static void track(struct MHD_Connection *c, void **context)
{
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *addr =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    tracked *t = calloc(1, sizeof *t);
    if (!t || !fd || !addr || !addr->client_addr) {
        free(t);
        return;
    }
    t->fd = fd->connect_fd;
    memcpy(&t->addr, addr->client_addr,
           addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                    : sizeof(struct sockaddr_in));
    t->until = monotonic() + deadline;
    t->in_headers = 1;
    pthread_mutex_lock(&lock);
    tracked **end = &head;
    tracked *last = NULL;
    while (*end)
        last = *end, end = &(*end)->next;
    t->prev = last;
    *end = t;
    make_room(t);
    pthread_mutex_unlock(&lock);
    *context = t;
}

static void untrack(void **context)
{
    tracked *t = *context;
    if (!t)
        return;
    pthread_mutex_lock(&lock);
    if (t->prev)
        t->prev->next = t->next;
    else
        head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    pthread_mutex_unlock(&lock);
    free(t);
    *context = NULL;
}

/* libmicrohttpd's connection notice; see server.h. */
void guard_notify(void *cls, struct MHD_Connection *c, void **context,
                  enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        track(c, context);
    else
        untrack(context);
}

static void set_phase(struct MHD_Connection *c, int in_headers, double seconds)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    tracked *t = info ? info->socket_context : NULL;
    if (!t)
        return;
    pthread_mutex_lock(&lock);
    t->in_headers = in_headers;
    t->until = monotonic() + seconds;
    pthread_mutex_unlock(&lock);
}

/* The connection's headers are complete; its body of `body_bytes` has
 * the header deadline plus a second per MiB to arrive; see server.h. */
void guard_headers_done(struct MHD_Connection *c, size_t body_bytes)
{
    set_phase(c, body_bytes > 0, deadline + (double)body_bytes / (1 << 20));
}

/* The connection's request body is complete: no deadline while it is
 * answered; see server.h. */
void guard_body_done(struct MHD_Connection *c)
{
    set_phase(c, 0, 0);
}

/* The connection's request is answered: the next one's headers have the
 * deadline again; see server.h. */
void guard_request_done(struct MHD_Connection *c)
{
    set_phase(c, 1, deadline);
}

/* Every 100 ms: connections past their header deadline are dropped. */
static void *reap(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    while (!stopping) {
        double now = monotonic();
        for (tracked *t = head; t; t = t->next)
            if (t->in_headers && !t->dropped && now > t->until)
                drop(t);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000 * 1000 * 1000)
            until.tv_sec++, until.tv_nsec -= 1000 * 1000 * 1000;
        pthread_cond_timedwait(&wake, &lock, &until);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Starts the reaper; see server.h. */
int guard_start(double header_deadline, int connections_per_address)
{
    deadline = header_deadline;
    per_address = connections_per_address;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &attr);
    pthread_condattr_destroy(&attr);
    stopping = 0;
    started = pthread_create(&reaper, NULL, reap, NULL) == 0;
    return started ? 0 : -1;
}

/* Stops the reaper; see server.h. */
void guard_stop(void)
{
    if (!started)
        return;
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(reaper, NULL);
    started = 0;
}

/* Connections the guard has dropped so far (for /metrics). */
long long guard_dropped(void)
{
    return atomic_load(&dropped_total);
}
