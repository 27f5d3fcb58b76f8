/* Fetching a recovery manifest over HTTP: a total deadline, however slowly
 * the server trickles its bytes. */
#define _DEFAULT_SOURCE /* nanosleep, MSG_NOSIGNAL */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>
#include <time.h>

#include "fixtures.h"
#include "process.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A server that answers one request with a status line and then one byte
 * every 100 ms for up to 60 s; `trickling` stays 1 while it still sends. */
typedef struct {
    int listener;
    atomic_int trickling, sent;
} trickle_server;

static void *trickle(void *arg)
{
    trickle_server *s = arg;
    int fd = accept(s->listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    char request[4096];
    (void)!read(fd, request, sizeof request);
    const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
    int ok = send(fd, head, sizeof head - 1, MSG_NOSIGNAL) > 0;
    s->trickling = 1;
    for (int i = 0; ok && i < 600; i++) {
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
        ok = send(fd, "x", 1, MSG_NOSIGNAL) == 1;
        s->sent += ok;
    }
    s->trickling = ok; /* 0: the client hung up while bytes still came */
    close(fd);
    return NULL;
}

TEST(manifest_url_fetch_has_a_total_deadline)
{
    trickle_server s = {.listener = socket(AF_INET, SOCK_STREAM, 0)};
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    ASSERT(s.listener >= 0);
    ASSERT(bind(s.listener, (struct sockaddr *)&addr, sizeof addr) == 0);
    ASSERT(listen(s.listener, 4) == 0);
    ASSERT(getsockname(s.listener, (struct sockaddr *)&addr, &len) == 0);
    pthread_t thread;
    ASSERT(pthread_create(&thread, NULL, trickle, &s) == 0);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/runs/r/manifest", ntohs(addr.sin_port));
    watched_run run = run_ordo_watched(
        A("ORDO_HTTP_DEADLINE_MS=1500"),
        A("resume", "--manifest", url, "--steps", "5", "--db", test_path("l.db")), 30);
    pthread_join(thread, NULL);
    close(s.listener);
    if (run.result.code != 1 || !strstr(run.result.err, "within 1500 ms") || run.seconds > 10)
        test_fail(__FILE__, __LINE__, "exit %d after %.1f s, stderr: %s", run.result.code,
                  run.seconds, run.result.err ? run.result.err : "");
    ASSERT(run.seconds >= 1.4);
    /* it gave up while bytes were still coming: the server's sends failed
     * (the client hung up) before its 600 bytes were out; read after the
     * join, so no timing decides it */
    ASSERT_EQ_INT(s.trickling, 0);
    ASSERT(s.sent >= 5 && s.sent < 600);
    cli_result_free(&run.result);
}
