/* libmicrohttpd glue: reading bodies within limits, one ledger connection
 * per thread, answering, logging one line per request. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server.h"

const server_config *server;
server_metrics metrics;

static pthread_key_t ledger_key;
static pthread_once_t ledger_once = PTHREAD_ONCE_INIT;

static void close_ledger(void *ledger)
{
    ordo_ledger_close(ledger);
}

static void make_key(void)
{
    pthread_key_create(&ledger_key, close_ledger);
}

/* The calling thread's connection; see server.h. */
ordo_ledger *server_ledger(ordo_error *err)
{
    pthread_once(&ledger_once, make_key);
    ordo_ledger *ledger = pthread_getspecific(ledger_key);
    if (ledger)
        return ledger;
    if (ordo_ledger_open(server->db, ORDO_OPEN_NO_CREATE, &ledger, err) != ORDO_OK)
        return NULL;
    pthread_setspecific(ledger_key, ledger);
    return ledger;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Renders the JSON body into owned text; see server.h. */
void server_render(response *out)
{
    if (!out->body)
        return;
    char *text = json_dumps(out->body, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(out->body);
    out->body = NULL;
    if (!text) {
        out->status = 500;
        out->owned_text = strdup("{\"error\":\"out of memory\",\"code\":\"internal\"}\n");
        return;
    }
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (line) {
        text = line;
        memcpy(text + n, "\n", 2);
    }
    out->owned_text = text;
}

/* Queues a response; the body is JSON (compact) unless text is given. */
static enum MHD_Result answer(request *req, response *out)
{
    const char *type = out->content_type ? out->content_type : "application/json";
    server_render(out);
    char *text = out->owned_text;
    if (!text && !(out->text && out->size)) /* a static file is served in place */
        text = strdup(out->text ? out->text : "");
    struct MHD_Response *r =
        text
            ? MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE)
            : MHD_create_response_from_buffer(out->size, (void *)out->text, MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", text ? "no-store" : "max-age=300");
    if (!text)
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'self'; style-src 'self' 'unsafe-inline'");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (out->status == 401)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"ordo\"");
    if (out->retry_after > 0) {
        char seconds[16];
        snprintf(seconds, sizeof seconds, "%d", out->retry_after);
        MHD_add_response_header(r, "Retry-After", seconds);
    }
    req->status = out->status;
    enum MHD_Result rc = MHD_queue_response(req->connection, (unsigned)out->status, r);
    MHD_destroy_response(r);
    return rc;
}

static int body_length_too_large(struct MHD_Connection *c)
{
    const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    return length && strtoull(length, NULL, 10) > SERVER_MAX_BODY;
}

/* The body's Content-Length within the limit, 0 when none is given. */
static size_t declared_length(struct MHD_Connection *c)
{
    const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    unsigned long long n = length ? strtoull(length, NULL, 10) : 0;
    return n <= SERVER_MAX_BODY ? (size_t)n : 0;
}

/* The bytes a request's body may take to arrive: its Content-Length, the
 * most a body may hold when it is chunked, 0 without a body. */
static size_t body_bytes_expected(struct MHD_Connection *c)
{
    if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding"))
        return SERVER_MAX_BODY;
    return declared_length(c);
}

/* Bytes of request bodies buffered by all connections together. */
static atomic_llong buffered;
/* Requests between their headers and their completion (for the drain). */
atomic_int server_in_flight;

static int writes(const char *method)
{
    return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
}

/* Called by libmicrohttpd with the raw request line's URI, before it is
 * percent-decoded: the request's state starts here, remembering whether
 * the raw path hides a separator ("%2F") or a NUL ("%00") that decoding
 * would turn into another path. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    request *req = calloc(1, sizeof *req);
    if (!req)
        return NULL;
    req->connection = c;
    req->started = now();
    req->route = 15;
    req->encoded_separator = server_raw_path_hides_separator(uri);
    return req;
}

/* Writes must say their body is JSON: a browser page on another origin can
 * send a form or text/plain POST without asking, never this one. */
static int json_content_type(struct MHD_Connection *c)
{
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    size_t n = strlen("application/json");
    return type && strncasecmp(type, "application/json", n) == 0 &&
           (type[n] == '\0' || type[n] == ';' || type[n] == ' ');
}

/* Authorisation and limits on the parsed route, in this order: the path
 * (400, 414), the declared body size (413), the token (every method but GET and HEAD needs a writer;
 * reads of /api and /metrics need a reader off loopback), the method
 * (404, 405) and the body's type (415). */
static int admit(request *req, response *out)
{
    struct MHD_Connection *c = req->connection;
    if (server_route_parse(req, out) != 0)
        return -1;
    if (body_length_too_large(c)) {
        req->too_large = 1;
        *out = json_error(413, "too_large", "request body is over %zu bytes", SERVER_MAX_BODY);
        return -1;
    }
    /* reads need no writer, so a body on one would let any client hold
     * the server's body budget: refused before a byte of it is kept */
    if (!writes(req->method) && body_bytes_expected(c) > 0) {
        *out = json_error(400, "unexpected_body", "a %s carries no body", req->method);
        return -1;
    }
    if (writes(req->method) ? require_writer(req, out) != 0
                            : req->api && require_reader(req, out) != 0)
        return -1;
    if (req->endpoint == E_NONE) {
        *out = json_error(404, "not_found", "no such resource: %s", req->url);
        return -1;
    }
    if (!server_route_allows(req)) {
        *out =
            json_error(405, "method_not_allowed", "%s is not allowed on %s", req->method, req->url);
        return -1;
    }
    if (writes(req->method) && !json_content_type(c)) {
        *out = json_error(415, "unsupported_media_type",
                          "a %s needs 'Content-Type: application/json'", req->method);
        return -1;
    }
    return 0;
}

/* The first call: the route, limits and authorisation are decided on the
 * headers, before any body is read. */
static enum MHD_Result on_headers(request *req, const char *url, const char *method)
{
    req->method = method;
    req->url = url;
    req->headers_seen = 1;
    guard_headers_done(req->connection, body_bytes_expected(req->connection));
    atomic_fetch_add(&server_in_flight, 1);
    response out;
    if (admit(req, &out) != 0)
        return answer(req, &out); /* no body is read for a request refused here */
    return MHD_YES;
}

/* Refuses a request while its body arrives. libmicrohttpd cannot queue a
 * response before the upload is complete (the client would only see the
 * connection close), so the answer waits for the end of the body, whose
 * bytes are dropped meanwhile (the body deadline bounds how long). */
static enum MHD_Result refuse_later(request *req, response *out)
{
    server_render(out);
    req->refusal = *out;
    req->refused = 1;
    atomic_fetch_sub(&buffered, (long long)req->buffered);
    req->buffered = 0;
    free(req->body);
    req->body = NULL;
    req->body_len = req->body_cap = 0;
    return MHD_YES;
}

/* A piece of the body: kept within the request's and the server's limits. */
static enum MHD_Result on_body(request *req, const char *upload, size_t size)
{
    if (req->status || req->refused)
        return MHD_YES; /* answered or refused already: the rest is dropped */
    response out;
    if (req->body_len + size > SERVER_MAX_BODY) {
        req->too_large = 1;
        out = json_error(413, "too_large", "request body is over %zu bytes", SERVER_MAX_BODY);
        return refuse_later(req, &out);
    }
    if (atomic_fetch_add(&buffered, (long long)size) + (long long)size > SERVER_MAX_BUFFERED) {
        atomic_fetch_sub(&buffered, (long long)size);
        out = json_error(503, "busy",
                         "the server is holding %lld bytes of request bodies; "
                         "try again",
                         (long long)SERVER_MAX_BUFFERED);
        out.retry_after = 1;
        return refuse_later(req, &out);
    }
    req->buffered += size;
    if (req->body_len + size + 1 > req->body_cap) {
        /* sized by Content-Length (checked against the limit) when given,
         * up to 1 MiB before the bytes arrive (a declared length costs
         * nothing), then doubled as they do */
        size_t declared = declared_length(req->connection) + 1;
        size_t cap = req->body_cap ? req->body_cap : declared < (1 << 20) ? declared : (1 << 20);
        cap = cap < 4096 ? 4096 : cap;
        while (cap < req->body_len + size + 1)
            cap *= 2;
        cap = cap > SERVER_MAX_BODY + 1 ? SERVER_MAX_BODY + 1 : cap;
        char *grown = realloc(req->body, cap);
        if (!grown) {
            out = json_error(503, "out_of_memory",
                             "out of memory receiving a body of %zu "
                             "bytes; try again",
                             req->body_len + size);
            out.retry_after = 1;
            return refuse_later(req, &out);
        }
        req->body = grown;
        req->body_cap = cap;
    }
    memcpy(req->body + req->body_len, upload, size);
    req->body_len += size;
    req->body[req->body_len] = '\0';
    return MHD_YES;
}

/* The access handler: called once for the headers, then per body piece,
 * then once more with nothing left to read. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
    (void)cls, (void)version, (void)c;
    request *req = *state;
    if (!req)
        return MHD_NO; /* on_uri could not allocate */
    if (!req->headers_seen)
        return on_headers(req, url, method);
    if (*upload_size) {
        enum MHD_Result rc = on_body(req, upload, *upload_size);
        *upload_size = 0;
        return rc;
    }
    guard_body_done(c); /* the request is in: no deadline while it is answered */
    if (req->refused) {
        req->refused = 0; /* the refusal's text goes with the response */
        return answer(req, &req->refusal);
    }
    if (req->status) /* answered already (413, 401, 503) */
        return MHD_YES;
    if (req->heavy_done) /* resumed by the heavy worker that built the answer */
        return answer(req, &req->heavy_out);
    response out;
    if (server_route_heavy(req)) {
        if (heavy_submit(req) == 0)
            return MHD_YES; /* suspended until a worker has the answer */
        out = json_error(503, "busy",
                         "%d heavy reads (compare, audit, views) are queued or "
                         "running; try again in a second",
                         heavy_capacity());
        out.retry_after = 1;
        return answer(req, &out);
    }
    server_route(req, &out);
    return answer(req, &out);
}

/* The URL as logged: control characters and spaces escaped, so a request
 * cannot forge log lines. */
static void log_url(const char *url, char *out, size_t size)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)url; *p && o + 5 < size; p++)
        o += (size_t)(*p <= 0x20 || *p == 0x7f ? snprintf(out + o, size - o, "%%%02X", *p)
                                               : (out[o] = (char)*p, 1));
    out[o] = '\0';
}

/* After the response went out (or the connection died): log, count, free. */
static void on_completed(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode why)
{
    (void)cls, (void)why;
    request *req = *state;
    if (!req)
        return;
    guard_request_done(c);
    if (!req->headers_seen) { /* the connection ended before its headers did */
        free(req);
        *state = NULL;
        return;
    }
    double ms = 1e3 * (now() - req->started);
    int status = req->status ? req->status : 499;
    char logged[1024];
    log_url(req->url, logged, sizeof logged);
    fprintf(stderr, "%s %s %d %.1f ms\n", req->method, logged, status, ms);
    atomic_fetch_sub(&buffered, (long long)req->buffered);
    body_release(req);
    atomic_fetch_sub(&server_in_flight, 1);
    int route = req->route >= 0 && req->route < 16 ? req->route : 15;
    int cls_index = status / 100 >= 1 && status / 100 <= 5 ? status / 100 : 5;
    atomic_fetch_add(&metrics.requests[route][cls_index], 1);
    atomic_fetch_add(&metrics.micros[route], (long long)(ms * 1e3));
    if (req->refused) /* the connection ended before the refusal went out */
        free(req->refusal.owned_text);
    free(req->body);
    free(req->path);
    free(req);
    *state = NULL;
}

/* Starts the daemon; see server.h. */
struct MHD_Daemon *server_start(const struct sockaddr *addr, const server_config *config)
{
    body_memory_watch();
    unsigned flags =
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    if (config->tls_cert)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[] = {
        {config->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0,
         (void *)config->tls_cert},
        {config->tls_key ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)config->tls_key},
        {MHD_OPTION_END, 0, NULL}};
    if (guard_start(config->header_deadline, SERVER_PER_ADDRESS) != 0 ||
        heavy_start(config->threads > 2 ? config->threads / 2 : 1) != 0)
        return NULL;
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)config->threads, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)1000, MHD_OPTION_NOTIFY_CONNECTION,
        guard_notify, NULL, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
        MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
}

/* ---- helpers for handlers ---- */

/* Parses a library JSON view and frees its text. */
json_t *view_json(char *text)
{
    json_t *value = text ? json_loads(text, 0, NULL) : NULL;
    ordo_free(text);
    return value;
}

response json_ok(int status, json_t *body)
{
    if (!body) /* a body that could not be built is a server error, never "{}" */
        return (response){.status = 500,
                          .body = json_pack("{s:s, s:s}", "error", "the answer could not be built",
                                            "code", "internal")};
    return (response){.status = status, .body = body};
}

/* Replaces every byte that is not part of valid UTF-8 with '?' (messages
 * repeat decoded URLs, which may be anything). */
static void utf8_clean(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t need = *p < 0x80                  ? 0
                      : *p >= 0xC2 && *p <= 0xDF ? 1
                      : *p >= 0xE0 && *p <= 0xEF ? 2
                      : *p >= 0xF0 && *p <= 0xF4 ? 3
                                                 : 4;
        size_t k = 1;
        while (need < 4 && k <= need && (p[k] & 0xC0) == 0x80)
            k++;
        if (need == 4 || k <= need) {
            *p++ = '?';
            continue;
        }
        p += need + 1;
    }
}

response json_error(int status, const char *code, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    utf8_clean(message);
    return json_ok(status, json_pack("{s:s, s:s}", "error", message, "code", code));
}

/* Replaces every mention of the ledger's file in a library message with
 * "the ledger": a client is never told where the server keeps it. */
static void redact_ledger_path(const char *message, char *out, size_t size)
{
    const char *path = server ? server->db : NULL;
    size_t n = path ? strlen(path) : 0, o = 0;
    for (const char *p = message; *p && o + 1 < size;) {
        if (n && strncmp(p, "ledger '", 8) == 0 && strncmp(p + 8, path, n) == 0 &&
            p[8 + n] == '\'') {
            o += (size_t)snprintf(out + o, size - o, "the ledger");
            p += 8 + n + 1;
        } else if (n && strncmp(p, path, n) == 0) {
            o += (size_t)snprintf(out + o, size - o, "the ledger");
            p += n;
        } else {
            out[o++] = *p++;
        }
    }
    out[o < size ? o : size - 1] = '\0';
}

response status_error(const ordo_error *err)
{
    char message[sizeof err->message + 16];
    redact_ledger_path(err->message, message, sizeof message);
    switch (err->status) {
    case ORDO_NOTFOUND: return json_error(404, "not_found", "%s", message);
    case ORDO_CONFLICT: return json_error(409, "conflict", "%s", message);
    case ORDO_INVALID: return json_error(400, "invalid", "%s", message);
    case ORDO_BUSY: return json_error(503, "busy", "%s", message);
    case ORDO_NOMEM: return json_error(503, "out_of_memory", "%s", message);
    default: /* the operator's log has the whole message */
        fprintf(stderr, "ordo serve: %s\n", err->message);
        return json_error(500, err->status == ORDO_IO ? "storage" : "internal", "%s", message);
    }
}

json_t *body_object(request *req, response *error)
{
    if (!req->body_len) {
        *error = json_error(400, "bad_json", "the request needs a JSON object body");
        return NULL;
    }
    if (body_scan(req->body, req->body_len, error) != 0 || body_reserve(req, error) != 0)
        return NULL; /* refused before Jansson spends memory on it */
    json_error_t jerr;
    body_memory_reset();
    json_t *root = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    /* Jansson reports a failed allocation as out_of_memory, as no error at
     * all (line -1, empty text) or, inside its lexer, as a syntax error:
     * the allocator's own note tells memory from JSON */
    if (!root && (body_memory_failed() || json_error_code(&jerr) == json_error_out_of_memory ||
                  !jerr.text[0])) {
        *error = json_error(503, "out_of_memory",
                            "out of memory parsing a body of %zu bytes; "
                            "try again",
                            req->body_len);
        return NULL;
    }
    if (!root) {
        *error = json_error(400, "bad_json", "malformed JSON at line %d, column %d: %s", jerr.line,
                            jerr.column, jerr.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        *error = json_error(400, "bad_json", "the body must be a JSON object");
        return NULL;
    }
    return root;
}

const char *query(const request *req, const char *name)
{
    return MHD_lookup_connection_value(req->connection, MHD_GET_ARGUMENT_KIND, name);
}

int parse_int64(const char *text, int64_t min, int64_t max, int64_t *out)
{
    if (!text || !*text)
        return -1;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (*end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}
