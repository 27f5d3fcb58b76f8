/* Routing: a request's path is parsed into an endpoint once, on its
 * headers; that one parse decides the authorisation (http.c) and the
 * dispatch (server_route), so the two can never disagree. */
#include <stdlib.h>
#include <string.h>

#include "server.h"

const char *const server_route_names[16] = {
    "healthz", "metrics", "recipes",  "runs",   "run",  "segments", "steps",    "checkpoints",
    "compare", "audit",   "recovery", "static", "plan", "batch",    "unknown2", "other"};

enum {
    R_HEALTH,
    R_METRICS,
    R_RECIPES,
    R_RUNS,
    R_RUN,
    R_SEGMENTS,
    R_STEPS,
    R_CHECKPOINTS,
    R_COMPARE,
    R_AUDIT,
    R_RECOVERY,
    R_STATIC,
    R_PLAN,
    R_BATCH,
    R_OTHER = 15
};

/* What each endpoint is: its metrics route, the methods it takes and
 * whether answering it is heavy work (run off the connection threads). */
static const struct endpoint_info {
    int route;
    int get, post, heavy;
} endpoints[] = {
    [E_NONE] = {R_OTHER, 0, 0, 0},
    [E_HEALTH] = {R_HEALTH, 1, 0, 0},
    [E_METRICS] = {R_METRICS, 1, 0, 0},
    [E_STATIC] = {R_STATIC, 1, 0, 0},
    [E_RECIPES] = {R_RECIPES, 0, 1, 0},
    [E_RECIPE] = {R_RECIPES, 1, 0, 0},
    [E_RUNS] = {R_RUNS, 1, 1, 0},
    [E_RUN] = {R_RUN, 1, 0, 0},
    [E_SEGMENTS] = {R_SEGMENTS, 0, 1, 0},
    [E_STEPS] = {R_STEPS, 1, 1, 0},
    [E_CHECKPOINTS] = {R_CHECKPOINTS, 1, 1, 0},
    [E_SERIES] = {R_RUN, 1, 0, 1},
    [E_RECOVERY] = {R_RECOVERY, 1, 0, 0},
    [E_COMPARE] = {R_COMPARE, 1, 0, 1},
    [E_STRIP] = {R_COMPARE, 1, 0, 1},
    [E_AUDIT] = {R_AUDIT, 1, 0, 1},
    [E_PLAN] = {R_PLAN, 1, 0, 0},
    [E_BATCH] = {R_BATCH, 1, 0, 1},
};

static int is(const request *req, const char *method)
{
    return strcmp(req->method, method) == 0;
}

static int reads(const request *req)
{
    return is(req, "GET") || is(req, "HEAD");
}

/* Splits the path into segments in place; -1 when it is not canonical
 * (an empty segment from "//" or a trailing "/", "." or ".."). */
static int split_path(char *path, char **parts, int max)
{
    if (path[0] != '/')
        return -1;
    if (path[1] == '\0')
        return 0;
    int n = 0;
    for (char *p = path + 1;;) {
        char *slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        if (!*p || !strcmp(p, ".") || !strcmp(p, ".."))
            return -1;
        if (n < max)
            parts[n] = p;
        n++;
        if (!slash)
            return n;
        p = slash + 1;
    }
}

static int endpoint_of_run(char **parts, int n)
{
    if (n == 2)
        return E_RUNS;
    if (n == 3)
        return E_RUN;
    static const struct {
        const char *name;
        int endpoint;
    } under_run[] = {{"segments", E_SEGMENTS},
                     {"steps", E_STEPS},
                     {"checkpoints", E_CHECKPOINTS},
                     {"series", E_SERIES},
                     {"recovery", E_RECOVERY}};
    for (size_t i = 0; n == 4 && i < sizeof under_run / sizeof under_run[0]; i++)
        if (!strcmp(parts[3], under_run[i].name))
            return under_run[i].endpoint;
    /* /api/runs/{run}/steps/{n}/batch */
    if (n == 6 && !strcmp(parts[3], "steps") && !strcmp(parts[5], "batch"))
        return E_BATCH;
    return E_NONE;
}

/* The endpoint of a canonical path split into n segments. */
static int endpoint_of(char **parts, int n)
{
    if (n == 0 || (n == 1 && !strcmp(parts[0], "index.html")) ||
        (n == 2 && !strcmp(parts[0], "static")))
        return E_STATIC;
    if (n == 1 && !strcmp(parts[0], "healthz"))
        return E_HEALTH;
    if (n == 1 && !strcmp(parts[0], "metrics"))
        return E_METRICS;
    if (n < 2 || strcmp(parts[0], "api") != 0)
        return E_NONE;
    if (!strcmp(parts[1], "recipes") && n <= 3)
        return n == 2 ? E_RECIPES : E_RECIPE;
    if (!strcmp(parts[1], "recipes") && n == 4 && !strcmp(parts[3], "plan"))
        return E_PLAN;
    if (!strcmp(parts[1], "runs"))
        return n <= 6 ? endpoint_of_run(parts, n) : E_NONE;
    if (!strcmp(parts[1], "compare") && n == 2)
        return E_COMPARE;
    if (!strcmp(parts[1], "compare") && n == 3 && !strcmp(parts[2], "strip"))
        return E_STRIP;
    if (!strcmp(parts[1], "audit") && n == 2)
        return E_AUDIT;
    return E_NONE;
}

/* Whether a raw URI's path (before '?') holds an encoded '/' or NUL; see
 * server.h. */
int server_raw_path_hides_separator(const char *uri)
{
    for (const char *p = uri; *p && *p != '?'; p++)
        if (p[0] == '%' &&
            ((p[1] == '2' && (p[2] == 'F' || p[2] == 'f')) || (p[1] == '0' && p[2] == '0')))
            return 1;
    return 0;
}

/* Parses the request's path; see server.h. */
int server_route_parse(request *req, response *error)
{
    size_t len = strlen(req->url);
    if (len >= 2048) {
        *error = json_error(414, "uri_too_long", "the path is longer than 2047 bytes");
        return -1;
    }
    req->path = malloc(len + 1);
    if (!req->path) {
        *error = json_error(503, "out_of_memory", "out of memory");
        return -1;
    }
    memcpy(req->path, req->url, len + 1);
    int n = req->encoded_separator ? -1 : split_path(req->path, req->parts, SERVER_MAX_PARTS);
    if (n < 0) {
        *error = json_error(400, "non_canonical_path",
                            "the path '%s' is not canonical (no '//', '.', '..', trailing '/' "
                            "or encoded '/' or NUL in a segment)",
                            req->url);
        return -1;
    }
    req->nparts = n;
    req->endpoint = n <= SERVER_MAX_PARTS ? endpoint_of(req->parts, n) : E_NONE;
    req->api = n >= 1 && (!strcmp(req->parts[0], "api") || !strcmp(req->parts[0], "metrics"));
    req->route = endpoints[req->endpoint].route;
    return 0;
}

/* Whether the parsed endpoint takes the request's method; see server.h. */
int server_route_allows(const request *req)
{
    const struct endpoint_info *e = &endpoints[req->endpoint];
    return (e->get && reads(req)) || (e->post && is(req, "POST"));
}

/* Whether answering the parsed request is heavy work; see server.h. */
int server_route_heavy(const request *req)
{
    return endpoints[req->endpoint].heavy && reads(req);
}

static response get(request *req)
{
    char **p = req->parts;
    switch (req->endpoint) {
    case E_HEALTH: return json_ok(200, json_pack("{s:s}", "status", "ok"));
    case E_METRICS: return api_metrics();
    case E_RECIPE: return api_recipe_get(p[2]);
    case E_PLAN: return api_recipe_plan(p[2]);
    case E_RUNS: return api_runs_list(req);
    case E_RUN: return api_run_get(p[2]);
    case E_STEPS: return api_steps_get(req, p[2]);
    case E_CHECKPOINTS: return api_checkpoints_get(p[2]);
    case E_SERIES: return api_run_series(req, p[2]);
    case E_RECOVERY: return api_recovery(req, p[2]);
    case E_COMPARE: return api_compare(req);
    case E_STRIP: return api_compare_strip(req);
    case E_AUDIT: return api_audit(req);
    case E_BATCH: return api_batch(req, p[2], p[4]);
    default: return json_error(404, "not_found", "no such resource: %s", req->url);
    }
}

static response post(request *req)
{
    char **p = req->parts;
    switch (req->endpoint) {
    case E_RECIPES: return api_recipe_post(req);
    case E_RUNS: return api_runs_post(req);
    case E_SEGMENTS: return api_segments_post(req, p[2]);
    case E_STEPS: return api_steps_post(req, p[2]);
    case E_CHECKPOINTS: return api_checkpoints_post(req, p[2]);
    default: return json_error(404, "not_found", "no such resource: %s", req->url);
    }
}

/* Fills `out` for a complete request whose path was parsed, authorised
 * and found to take its method (http.c); see server.h. */
void server_route(request *req, response *out)
{
    if (req->endpoint == E_STATIC) {
        if (!static_file(req, req->url, out))
            *out = json_error(404, "not_found", "no such resource: %s", req->url);
        return;
    }
    *out = is(req, "POST") ? post(req) : get(req);
}

/* Parses `uri` as both the raw and the decoded path of a request with
 * each method, and aborts when a parse that succeeded let a non-canonical
 * path through (for the fuzzer); see server.h. */
void server_fuzz_path(const char *uri)
{
    static const char *const methods[] = {"GET", "HEAD", "POST", "DELETE"};
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        request req = {.method = methods[m], .url = uri};
        req.encoded_separator = server_raw_path_hides_separator(uri);
        response error = {0};
        if (server_route_parse(&req, &error) != 0) {
            json_decref(error.body);
            free(req.path);
            continue;
        }
        if (req.encoded_separator || strstr(uri, "//") || strstr(uri, "/./") ||
            strstr(uri, "/../") || (req.nparts > 0 && uri[strlen(uri) - 1] == '/'))
            abort();
        for (int i = 0; i < req.nparts && i < SERVER_MAX_PARTS; i++)
            if (!*req.parts[i] || !strcmp(req.parts[i], ".") || !strcmp(req.parts[i], ".."))
                abort();
        (void)server_route_allows(&req);
        (void)server_route_heavy(&req);
        free(req.path);
    }
}
