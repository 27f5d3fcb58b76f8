/* The test server and client; see http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixtures.h"
#include "http.h"

long long server_file_limit;

void server_up(test_server *s, const char *db, const char *const *extra)
{
    memset(s, 0, sizeof *s);
    snprintf(s->db, sizeof s->db, "%s", db);
    int out[2], log[2];
    ASSERT(pipe(out) == 0 && pipe(log) == 0);
    const char *bin = getenv("ORDO_BIN");
    ASSERT(bin != NULL);
    s->pid = fork();
    ASSERT(s->pid >= 0);
    if (s->pid == 0) {
        dup2(out[1], 1);
        dup2(log[1], 2);
        close(out[0]);
        close(log[0]);
        if (server_file_limit > 0) {
            struct rlimit limit = {(rlim_t)server_file_limit, (rlim_t)server_file_limit};
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &limit);
        }
        const char *argv[32] = {bin, "serve", "--db", db, "--listen", "127.0.0.1:0"};
        int n = 6;
        for (int i = 0; extra && extra[i] && n < 30; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    close(log[1]);
    s->log_fd = log[0];
    char line[512];
    size_t len = 0;
    while (len + 1 < sizeof line) {
        ssize_t n = read(out[0], line + len, 1);
        if (n <= 0 || line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    close(out[0]);
    const char *at = strstr(line, "http://");
    at = at ? strchr(at + strlen("http://"), ':') : NULL;
    if (!at)
        test_fail(__FILE__, __LINE__, "ordo serve did not start: '%s'", line);
    s->port = atoi(at + 1);
    ASSERT(s->port > 0);
}

void server_down(test_server *s)
{
    ASSERT(kill(s->pid, SIGTERM) == 0);
    int status = 0;
    ASSERT(waitpid(s->pid, &status, 0) == s->pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char log[16384];
        ssize_t n = read(s->log_fd, log, sizeof log - 1);
        log[n > 0 ? n : 0] = '\0';
        const char *tail = strlen(log) > 4000 ? log + strlen(log) - 4000 : log;
        test_fail(__FILE__, __LINE__, "ordo serve ended with status %d; its log ends:\n%s", status,
                  tail);
    }
    close(s->log_fd);
}

static int connect_to(const test_server *s)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ASSERT(connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0);
    return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the server may close early (413): the answer tells */
        data += n;
        len -= (size_t)n;
    }
}

static char *read_all(int fd, size_t *len)
{
    size_t cap = 65536;
    char *buf = malloc(cap);
    *len = 0;
    for (;;) {
        if (*len + 1 >= cap)
            buf = realloc(buf, cap *= 2);
        ssize_t n = recv(fd, buf + *len, cap - *len - 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        *len += (size_t)n;
    }
    buf[*len] = '\0';
    return buf;
}

http_result http(const test_server *s, const char *method, const char *path, const char *token,
                 const char *body)
{
    http_result r = {0};
    int fd = connect_to(s);
    size_t body_len = body ? strlen(body) : 0;
    char head[2048];
    int n =
        snprintf(head, sizeof head,
                 "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                 "Content-Length: %zu\r\n%s%s%s%s\r\n",
                 method, path, body_len, body ? "Content-Type: application/json\r\n" : "",
                 token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "");
    send_all(fd, head, (size_t)n);
    if (body_len)
        send_all(fd, body, body_len);
    size_t len = 0;
    char *raw = read_all(fd, &len);
    close(fd);
    sscanf(raw, "HTTP/1.%*d %d", &r.status);
    char *split = strstr(raw, "\r\n\r\n");
    if (split) {
        size_t h = (size_t)(split - raw);
        memcpy(r.headers, raw, h < sizeof r.headers - 1 ? h : sizeof r.headers - 1);
        r.body = strdup(split + 4);
    } else {
        r.body = strdup("");
    }
    free(raw);
    r.json = json_loads(r.body, 0, NULL);
    return r;
}

int http_raw(const test_server *s, const char *bytes, size_t len)
{
    int fd = connect_to(s);
    send_all(fd, bytes, len);
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    char *raw = read_all(fd, &got);
    close(fd);
    int status = 0;
    sscanf(raw, "HTTP/1.%*d %d", &status);
    free(raw);
    return status;
}

void http_free(http_result *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

const char *make_token(const char *db, const char *role)
{
    static char tokens[2][128];
    char *slot = tokens[strcmp(role, "writer") == 0 ? 0 : 1];
    cli_result c =
        run_ordo(NULL, (const char *const[]){"token", "create", "--role", role, "--db", db, NULL});
    ASSERT_EQ_INT(c.code, 0);
    snprintf(slot, sizeof tokens[0], "%s", c.out);
    slot[strcspn(slot, "\n")] = '\0';
    cli_result_free(&c);
    return slot;
}

/* HTTP_EXPECT's check, failing at the caller's file and line. */
void http_expect_at(const char *file, int line, const http_result *r, int status, const char *code,
                    const char *needle)
{
    const char *got = json_string_value(json_object_get(r->json, "code"));
    if (r->status != status || (code && (!got || strcmp(got, code) != 0)) ||
        (needle && !strstr(r->body ? r->body : "", needle)))
        test_fail(file, line, "expected %d %s '%s', got %d: %s", status, code ? code : "",
                  needle ? needle : "", r->status, r->body ? r->body : "");
}
