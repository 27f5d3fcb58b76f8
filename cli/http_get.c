/* A minimal HTTP/1.1 GET for `ordo resume --manifest http://...`: plain
 * HTTP on a trusted network (the service's own address). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_get.h"

/* The whole exchange (connect, request, every byte of the answer) must end
 * within this many milliseconds: a server trickling bytes cannot hold a
 * resume. ORDO_HTTP_DEADLINE_MS overrides it (tests use a short one). */
#define DEADLINE_MS 30000

static long deadline_ms(void)
{
    const char *text = getenv("ORDO_HTTP_DEADLINE_MS");
    char *end = NULL;
    long ms = text ? strtol(text, &end, 10) : 0;
    return text && *text && end && !*end && ms > 0 && ms <= DEADLINE_MS ? ms : DEADLINE_MS;
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reads what arrives before `end` (a now_ms() time): >0 bytes, 0 at the
 * end of the answer, -1 on an error, -2 when the deadline passed. */
static ssize_t read_before(int fd, char *buf, size_t size, long long end)
{
    for (;;) {
        long long left = end - now_ms();
        if (left <= 0)
            return -2;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, (int)left);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            return -1;
        if (ready == 0)
            return -2;
        ssize_t n = read(fd, buf, size);
        if (n < 0 && errno == EINTR)
            continue;
        return n;
    }
}

static int connect_host(const char *host, const char *port, long limit_ms)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *found = NULL;
    if (getaddrinfo(host, port, &hints, &found) != 0)
        return -1;
    int fd = -1;
    struct timeval limit = {limit_ms / 1000, (limit_ms % 1000) * 1000};
    for (struct addrinfo *a = found; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0) {
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
        }
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(found);
    return fd;
}

/* Fetches an http:// URL; see http_get.h. */
char *http_get(const char *url, size_t max, size_t *len, char *why, size_t why_size)
{
    char host[256], port[8] = "80";
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(why, why_size, "'%s' is not an http:// URL", url);
        return NULL;
    }
    const char *rest = url + strlen("http://"), *path = strchr(rest, '/');
    size_t host_len = path ? (size_t)(path - rest) : strlen(rest);
    if (host_len == 0 || host_len >= sizeof host) {
        snprintf(why, why_size, "'%s' is not an http:// URL", url);
        return NULL;
    }
    memcpy(host, rest, host_len);
    host[host_len] = '\0';
    char *colon = strrchr(host, ':');
    if (colon) {
        if (strlen(colon + 1) == 0 || strlen(colon + 1) >= sizeof port ||
            strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
            snprintf(why, why_size, "'%s' has a bad port", url);
            return NULL;
        }
        snprintf(port, sizeof port, "%s", colon + 1);
        *colon = '\0';
    }
    long limit = deadline_ms();
    long long end = now_ms() + limit;
    int fd = connect_host(host, port, limit);
    if (fd < 0) {
        snprintf(why, why_size, "cannot connect to %s:%s", host, port);
        return NULL;
    }
    char request[2048];
    int n = snprintf(request, sizeof request,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
                     "Accept: application/json\r\n\r\n",
                     path ? path : "/", host);
    if (n < 0 || (size_t)n >= sizeof request || write(fd, request, (size_t)n) != n) {
        close(fd);
        snprintf(why, why_size, "cannot send the request to %s", host);
        return NULL;
    }
    size_t cap = 65536, got = 0;
    char *buf = malloc(cap);
    ssize_t r = 0;
    while (buf && (r = read_before(fd, buf + got, cap - got - 1, end)) > 0) {
        got += (size_t)r;
        if (got > max + 16384)
            break;
        if (got + 1 >= cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                free(buf);
                buf = NULL;
            }
            buf = grown;
        }
    }
    close(fd);
    if (!buf) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    if (r < 0) {
        if (r == -2)
            snprintf(why, why_size,
                     "%s did not send its whole answer within %ld ms (%zu bytes "
                     "so far); giving up",
                     url, limit, got);
        else
            snprintf(why, why_size, "cannot read the answer of %s", url);
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    int status = 0;
    char *body = strstr(buf, "\r\n\r\n");
    int chunked = 0;
    for (char *p = buf; body && p < body; p++) /* headers are case-insensitive */
        chunked |= strncasecmp(p, "transfer-encoding: chunked", 26) == 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1 || !body || status != 200 || chunked) {
        snprintf(why, why_size, "%s answered %d%s%.200s", url, status, body ? ": " : "",
                 body ? body + 4 : "");
        free(buf);
        return NULL;
    }
    body += 4;
    *len = got - (size_t)(body - buf);
    if (*len > max) {
        snprintf(why, why_size, "%s sent more than %zu bytes", url, max);
        free(buf);
        return NULL;
    }
    memmove(buf, body, *len + 1);
    return buf;
}
