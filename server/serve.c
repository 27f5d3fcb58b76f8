/* server_run: the service's life — the ledger, binding, signals, the drain. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

static int bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    if (!info || getsockname(info->listen_fd, (struct sockaddr *)&addr, &len) != 0)
        return -1;
    return ntohs(addr.sin_port);
}

/* Stops accepting (the listening socket is shut so new clients are refused
 * at once), lets the requests in flight finish (up to 10 s, and heavy
 * reads under way until they are answered; idle keep-alive connections
 * are not waited for), stops. */
static void drain(struct MHD_Daemon *d)
{
    MHD_socket listening = MHD_quiesce_daemon(d);
    if (listening != MHD_INVALID_SOCKET)
        shutdown(listening, SHUT_RDWR);
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 1000 && atomic_load(&server_in_flight) > 0; i++)
        nanosleep(&tick, NULL);
    heavy_close(); /* suspended connections must be resumed before the daemon stops */
    MHD_stop_daemon(d);
    heavy_stop();
    guard_stop();
    if (listening != MHD_INVALID_SOCKET)
        close(listening);
}

/* Creates and migrates the ledger before any request can open it. */
static int prepare_ledger(const char *db)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    if (ordo_ledger_open(db, 0, &ledger, &err) != ORDO_OK) {
        fprintf(stderr, "ordo serve: %s\n", err.message);
        return -1;
    }
    ordo_ledger_close(ledger);
    return 0;
}

/* Runs the service (server_run.h). */
int server_run(const server_config *options)
{
    static server_config config; /* read by every request's thread */
    config = *options;
    config.loopback = (ntohl(config.address.sin_addr.s_addr) >> 24) == 127;
    if (config.tls_cert && !MHD_is_feature_supported(MHD_FEATURE_TLS))
        return fprintf(stderr, "ordo serve: this libmicrohttpd has no TLS support\n"), -1;
    if (prepare_ledger(config.db) != 0)
        return -1;
    server = &config;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* the daemon's threads inherit it */
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *d = server_start((const struct sockaddr *)&config.address, &config);
    if (!d)
        return fprintf(stderr, "ordo serve: cannot listen on %s%s\n", config.listen,
                       config.tls_cert ? " (or the certificate and key do not fit)" : ""),
               -1;
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &config.address.sin_addr, host, sizeof host);
    printf("ordo serve: listening on %s://%s:%d (ledger %s)\n", config.tls_cert ? "https" : "http",
           host, bound_port(d), config.db);
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "ordo serve: %s, finishing requests in flight\n",
            sig == SIGTERM ? "SIGTERM" : "SIGINT");
    drain(d);
    fprintf(stderr, "ordo serve: stopped\n");
    return 0;
}
