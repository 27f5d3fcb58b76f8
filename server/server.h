/* The ordo service (internal to the ordo binary): HTTP over the ledger,
 * built on libmicrohttpd and Jansson, using only ordo.h. */
#ifndef ORDO_SERVER_H
#define ORDO_SERVER_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ordo.h"
#include "server_run.h"

#define SERVER_MAX_BODY ((size_t)64 << 20)         /* bytes of a request body */
#define SERVER_MAX_BUFFERED ((long long)512 << 20) /* bytes of bodies held at once */
#define SERVER_MAX_ITEMS 10000                     /* steps or checkpoints per request */
#define SERVER_MAX_LANE_REPORTS 640000             /* lane reports per request */
#define SERVER_MAX_LANE_STATE ((size_t)16 << 20)   /* bytes of a step's lane_state (decoded) */
/* What a body may hold before it is parsed (body.c): the largest request
 * accepted is 640,000 lane reports of 7 values and keys each (object, 3
 * keys, 3 values); whole steps need fewer. Anything beyond costs Jansson
 * memory no request needs. */
#define SERVER_MAX_DEPTH 32
#define SERVER_MAX_CONTAINERS (SERVER_MAX_LANE_REPORTS + 4 * SERVER_MAX_ITEMS + 64)
#define SERVER_MAX_VALUES (7 * SERVER_MAX_LANE_REPORTS + 64)
/* What parsing a body may cost, reserved before Jansson runs and kept until
 * the request completes: 10 times its bytes (measured: the largest body
 * accepted peaks at 9), out of a budget shared by all requests, so bodies
 * parsed at once cannot together pass it (503 busy beyond). */
#define SERVER_PARSE_COST 10
#define SERVER_PARSE_BUDGET ((long long)768 << 20)
#define SERVER_TRIM_AFTER ((long long)64 << 20) /* parse cost after which memory is trimmed */
#define SERVER_MANIFEST_STEPS 16                /* expected digests in a recovery manifest */
#define SERVER_MAX_EVENTS 1000                  /* latest events shown with a run */
#define SERVER_PER_ADDRESS 256                  /* connections from one address */
#define SERVER_MAX_PARTS 6 /* path segments an endpoint has, at most (/api/runs/R/steps/N/batch) */

/* Counters for /metrics (updated with atomics from every thread). */
typedef struct server_metrics {
    atomic_llong requests[16][6]; /* by route, by status class 1xx..5xx (index 1..5) */
    atomic_llong micros[16];      /* summed latency by route */
    atomic_llong steps_ingested, conflicts, divergences;
} server_metrics;

/* A response: status and a JSON body (stolen). */
typedef struct response {
    int status;
    json_t *body;
    const char *text; /* a plain-text body instead (static), e.g. /metrics */
    char *owned_text; /* or an owned one */
    const char *content_type;
    size_t size;     /* of a static text; 0: strlen */
    int retry_after; /* seconds, sent as Retry-After when > 0 */
} response;

/* The endpoints a path can name (routes.c). */
enum {
    E_NONE,
    E_HEALTH,
    E_METRICS,
    E_STATIC,
    E_RECIPES,
    E_RECIPE,
    E_RUNS,
    E_RUN,
    E_SEGMENTS,
    E_STEPS,
    E_CHECKPOINTS,
    E_SERIES,
    E_RECOVERY,
    E_COMPARE,
    E_STRIP,
    E_AUDIT,
    E_PLAN,
    E_BATCH
};

/* One request being read and answered. */
typedef struct request {
    struct MHD_Connection *connection;
    const char *method, *url; /* url: percent-decoded by libmicrohttpd */
    int headers_seen;         /* the access handler was called */
    int encoded_separator;    /* the raw path had %2F or %00 */
    char *path;               /* owned copy of url, split into parts */
    char *parts[SERVER_MAX_PARTS];
    int nparts, endpoint, api;  /* api: under /api or /metrics */
    struct request *heavy_next; /* queued for the heavy workers (heavy.c) */
    response heavy_out;         /* set by a worker before it resumes the connection */
    int heavy_done;
    double heavy_queued; /* when it was queued (monotonic seconds) */
    char *body;
    size_t body_len, body_cap;
    size_t buffered;   /* counted in the server's budget */
    long long parsing; /* bytes reserved in the parse budget (body.c) */
    int too_large;
    int refused;      /* refused while its body arrived: the rest is dropped */
    response refusal; /* rendered; answered once the body is in */
    int status;       /* of the response queued */
    int route;        /* index for metrics */
    double started;   /* monotonic seconds */
} request;

extern const server_config *server;
extern atomic_int server_in_flight; /* requests being read or answered */
extern server_metrics metrics;

/* The ledger connection of the calling thread (opened on first use,
 * closed when the thread ends); NULL with *err set on failure. */
ordo_ledger *server_ledger(ordo_error *err);

/* Parses req->url into req->endpoint and req->parts, once, on the
 * headers: 0, or -1 with *error filled (400 for a path that is not
 * canonical, 414 for a long one). Authorisation and dispatch both use
 * what it parsed. */
int server_route_parse(request *req, response *error);
/* 1 when a raw URI's path (before any '?') holds "%2F" or "%00", which
 * percent-decoding would turn into another path. */
int server_raw_path_hides_separator(const char *uri);
/* Runs the path parser on `uri` and checks what it lets through (for the
 * fuzzer; aborts on a violation). */
void server_fuzz_path(const char *uri);
/* 1 when the parsed endpoint takes the request's method (HEAD as GET). */
int server_route_allows(const request *req);
/* 1 when the parsed request is heavy work (compare, audit, views). */
int server_route_heavy(const request *req);
/* Dispatch: fills `out` for a complete, parsed, authorised request. */
void server_route(request *req, response *out);

/* Route names for metrics, by index. */
extern const char *const server_route_names[16];

/* Renders a JSON body into owned_text (compact, one line); a body that
 * cannot be rendered becomes a 500. */
void server_render(response *out);

/* Heavy reads (heavy.c). heavy_start starts `workers` threads admitting
 * at most 32 (or twice as many as workers) requests queued or running;
 * heavy_submit (from the access handler, for a complete request) suspends
 * the connection and queues it, or returns -1 when full; a worker fills
 * req->heavy_out (a 503 for a request that waited 20 s in the queue), sets
 * req->heavy_done and resumes the connection. heavy_close refuses new ones
 * and waits for those admitted; heavy_stop joins the workers. */
int heavy_start(int workers);
int heavy_submit(request *req);
int heavy_capacity(void);
void heavy_close(void);
void heavy_stop(void);

/* Helpers for handlers. */
response json_ok(int status, json_t *body);
response json_error(int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The value of one of the library's JSON views (ordo_step_json, ...;
 * ordo.h), which it frees; NULL when `text` is NULL. A new reference. */
json_t *view_json(char *text);
/* A JSON answer built as text from the library's views (json_text.c):
 * json_text_raw appends JSON text, json_text_item a view (stolen; NULL is
 * left out) with a comma before all but the first item of a list, and
 * json_text_ok hands the text over as the response (a 500 when memory ran
 * out). Start from (json_text){0}; items counts what json_text_item added. */
typedef struct json_text {
    char *data;
    size_t len, cap;
    int items, failed;
} json_text;
void json_text_raw(json_text *t, const char *text);
void json_text_item(json_text *t, char *view);
response json_text_ok(json_text *t, int status);
/* An error response for a library status (404 not found, 409 conflict, ...). */
response status_error(const ordo_error *err);
/* Parses the request body as a JSON object within the limits above; on
 * failure fills *error (413 beyond the limits, 400 for bad JSON, 503 when
 * memory runs out). The caller owns the object. */
json_t *body_object(request *req, response *error);
/* Reserves what parsing the body will cost (SERVER_PARSE_COST times its
 * bytes) in the shared budget: 0, or -1 with *error (503 busy) when the
 * bodies being parsed hold it already (body.c). */
int body_reserve(request *req, response *error);
/* Gives back what the request reserved (when it completes). */
void body_release(request *req);
/* Counts a body's values, containers and depth without parsing it: 0
 * within the limits, else -1 with *error (413) naming the limit (body.c). */
int body_scan(const char *body, size_t len, response *error);
/* Out-of-memory detection for parsing (body.c): body_memory_watch (once,
 * before the daemon starts) routes Jansson's allocations through a
 * wrapper that notes a failure on the calling thread; body_memory_reset
 * clears the note before a parse and body_memory_failed reads it after. */
void body_memory_watch(void);
void body_memory_reset(void);
int body_memory_failed(void);
/* The first key of `object` not in `known` (NULL-terminated), or NULL;
 * borrowed from the object. */
const char *unknown_key(json_t *object, const char *const *known);
/* 0 when every key of `object` is in `known`; else -1 with *error (400)
 * naming the key, `what` the object and listing the known ones. */
int body_keys(json_t *object, const char *const *known, const char *what, response *error);
/* A query argument, or NULL. */
const char *query(const request *req, const char *name);
/* Parses a whole number in [min, max]; 0 on success. */
int parse_int64(const char *text, int64_t min, int64_t max, int64_t *out);

/* Authorisation: 0 when the request may go on, else fills *error. Both
 * are decided on the headers (http.c), on the parsed route; handlers
 * assume them. */
int require_writer(const request *req, response *error);
int require_reader(const request *req, response *error);

/* Handlers (api_*.c). */
response api_recipe_post(request *req);
response api_recipe_get(const char *id);
/* GET /api/recipes/{id}/plan: the recipe's plan document (api_plan.c). */
response api_recipe_plan(const char *id);
response api_runs_post(request *req);
response api_runs_list(request *req);
response api_run_get(const char *run);
response api_segments_post(request *req, const char *run);
response api_steps_post(request *req, const char *run);
response api_steps_get(request *req, const char *run);
response api_checkpoints_post(request *req, const char *run);
response api_checkpoints_get(const char *run);
response api_compare(request *req);
response api_recovery(request *req, const char *run);
response api_audit(request *req);
response api_metrics(void);
response api_compare_strip(request *req);
response api_run_series(request *req, const char *run);
/* GET /api/runs/{run}/steps/{n}/batch[?lane=L][&text=1]: the step's batch
 * regenerated and checked (api_batch.c). */
response api_batch(request *req, const char *run, const char *step);
/* Static dashboard files (static.c): 0 when `path` is not one. */
int static_file(request *req, const char *path, response *out);

/* Starts the daemon (epoll, a pool of `threads`, TLS when the config has a
 * certificate) on `addr` (http.c). */
struct sockaddr;
struct MHD_Daemon *server_start(const struct sockaddr *addr, const server_config *config);

/* The connection guard (guard.c). guard_start starts its reaper: a
 * connection whose request headers are not complete `header_deadline`
 * seconds after they began is shut down, however it trickles bytes,
 * and one whose body is not in by then plus a second per MiB declared is
 * too; an address over `per_address` connections loses its oldest one
 * still sending a request. guard_notify is libmicrohttpd's connection
 * notice; the access handler calls guard_headers_done (with the body's
 * expected bytes) and guard_body_done, the completion callback
 * guard_request_done. guard_stop joins the reaper (after the daemon
 * stopped). */
int guard_start(double header_deadline, int per_address);
void guard_stop(void);
void guard_notify(void *cls, struct MHD_Connection *c, void **context,
                  enum MHD_ConnectionNotificationCode code);
void guard_headers_done(struct MHD_Connection *c, size_t body_bytes);
void guard_body_done(struct MHD_Connection *c);
void guard_request_done(struct MHD_Connection *c);
long long guard_dropped(void);

/* Runs a steps body's bytes through the body limits, the key checks and
 * the steps and lane-report parsers without a ledger (for the fuzzer). */
void server_fuzz_bodies(const char *bytes, size_t size);

#endif
