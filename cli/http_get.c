/* A minimal HTTP/1.1 GET for `ordo resume --manifest http://...`: plain
 * HTTP on a trusted network (the service's own address). */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_get.h"

static int connect_host(const char *host, const char *port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *found = NULL;
    if (getaddrinfo(host, port, &hints, &found) != 0)
        return -1;
    int fd = -1;
    struct timeval limit = {30, 0}; /* a silent server is an error, not a hang */
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
    int fd = connect_host(host, port);
    if (fd < 0) {
        snprintf(why, why_size, "cannot connect to %s:%s", host, port);
        return NULL;
    }
    char request[2048];
    int n = snprintf(request, sizeof request,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
                     "Accept: application/json\r\n\r\n", path ? path : "/", host);
    if (n < 0 || (size_t)n >= sizeof request || write(fd, request, (size_t)n) != n) {
        close(fd);
        snprintf(why, why_size, "cannot send the request to %s", host);
        return NULL;
    }
    size_t cap = 65536, got = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while (buf && (r = read(fd, buf + got, cap - got - 1)) > 0) {
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
