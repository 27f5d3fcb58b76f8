/* The ordo service's one entry (server/): the only header of server/ that
 * the CLI includes. `ordo serve` (cli/cmd_serve.c) parses its options into
 * a server_config and calls server_run. */
#ifndef ORDO_SERVER_RUN_H
#define ORDO_SERVER_RUN_H

#include <netinet/in.h>

/* How the server is started. Strings are borrowed for as long as
 * server_run runs. */
typedef struct server_config {
    const char *db;                 /* the ledger's path; created and migrated at start */
    struct sockaddr_in address;     /* IPv4 address and port to bind (port 0: a free one) */
    const char *listen;             /* the address as given, for messages */
    int loopback;                   /* bound to a loopback address (server_run sets it) */
    int public_read;                /* reads need no token even off loopback */
    int threads;                    /* worker threads, 1 to 256 */
    int insecure;                   /* tokens accepted over plain HTTP off loopback */
    const char *tls_cert, *tls_key; /* PEM text, or NULL for plain HTTP */
    double header_deadline;         /* seconds a connection has to send a request's headers */
} server_config;

/* Runs the service until SIGTERM or SIGINT: opens (creates, migrates) the
 * ledger, binds, prints "ordo serve: listening on URL (ledger PATH)" on
 * stdout, then on the signal lets requests in flight finish and stops.
 * Returns 0 after a clean stop, -1 when it could not start (why is printed
 * on stderr as "ordo serve: ..."). */
int server_run(const server_config *config);

#endif
