/* A real `ordo serve` on 127.0.0.1 (port 0) and a small HTTP/1.1 client
 * for the service tests. */
#ifndef ORDO_TEST_HTTP_H
#define ORDO_TEST_HTTP_H

#include <jansson.h>
#include <sys/types.h>

#include "harness.h"

typedef struct test_server {
    pid_t pid;
    int port;
    int log_fd; /* the server's stderr (request log), readable */
    char db[1024];
} test_server;

/* Starts `ordo serve --db DB --listen 127.0.0.1:0 [extra...]` and waits for
 * the line naming its port (no sleeping: it reads the server's stdout). */
void server_up(test_server *s, const char *db, const char *const *extra);

/* When > 0, the next servers started may write files only up to this many
 * bytes (RLIMIT_FSIZE, SIGXFSZ ignored): a disk that is full for them. */
extern long long server_file_limit;

/* SIGTERM, then waits: the server must exit 0. */
void server_down(test_server *s);

typedef struct http_result {
    int status;
    char *body;   /* owned */
    json_t *json; /* parsed body, or NULL */
    char headers[2048];
} http_result;

/* One request (Connection: close). token may be NULL; body may be NULL. */
http_result http(const test_server *s, const char *method, const char *path, const char *token,
                 const char *body);

/* Sends raw bytes and returns the status of the answer (0 when none). */
int http_raw(const test_server *s, const char *bytes, size_t len);

void http_free(http_result *r);

/* Checks an answer of the service: its status, its JSON "code" (NULL: any)
 * and a text its body holds (NULL: any); fails naming what came. */
#define HTTP_EXPECT(r, status, code, needle)                                                       \
    http_expect_at(__FILE__, __LINE__, (r), (status), (code), (needle))

void http_expect_at(const char *file, int line, const http_result *r, int status, const char *code,
                    const char *needle);

/* Creates a token with the CLI; returns it (static storage per role). */
const char *make_token(const char *db, const char *role);

#endif
