/* Routing by method and path. */
#include <string.h>

#include "server.h"

const char *const server_route_names[16] = {
    "healthz", "metrics", "recipes",     "runs",     "run",   "segments", "steps", "checkpoints",
    "compare", "audit",   "recovery",    "static", "unknown4", "unknown3", "unknown2", "other"};

enum { R_HEALTH, R_METRICS, R_RECIPES, R_RUNS, R_RUN, R_SEGMENTS, R_STEPS, R_CHECKPOINTS,
       R_COMPARE, R_AUDIT, R_RECOVERY, R_STATIC, R_OTHER = 15 };

/* Splits "/api/runs/NAME/steps" into at most 5 segments (in place). */
static int split_path(char *path, char *parts[5])
{
    int n = 0;
    for (char *p = path; *p && n < 5;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        parts[n++] = p;
        char *slash = strchr(p, '/');
        if (!slash)
            break;
        *slash = '\0';
        p = slash + 1;
    }
    return n;
}

static int is(const request *req, const char *method)
{
    return strcmp(req->method, method) == 0;
}

static response not_allowed(const request *req)
{
    return json_error(405, "method_not_allowed", "%s is not allowed on %s", req->method,
                      req->url);
}

static response run_routes(request *req, char **parts, int n)
{
    if (n == 2) {
        req->route = R_RUNS;
        return is(req, "GET") ? api_runs_list(req) : is(req, "POST") ? api_runs_post(req)
                                                                     : not_allowed(req);
    }
    const char *run = parts[2];
    if (n == 3) {
        req->route = R_RUN;
        return is(req, "GET") ? api_run_get(run) : not_allowed(req);
    }
    const char *what = parts[3];
    if (n == 4 && strcmp(what, "segments") == 0) {
        req->route = R_SEGMENTS;
        return is(req, "POST") ? api_segments_post(req, run) : not_allowed(req);
    }
    if (n == 4 && strcmp(what, "steps") == 0) {
        req->route = R_STEPS;
        return is(req, "POST")  ? api_steps_post(req, run)
               : is(req, "GET") ? api_steps_get(req, run)
                                : not_allowed(req);
    }
    if (n == 4 && strcmp(what, "checkpoints") == 0) {
        req->route = R_CHECKPOINTS;
        return is(req, "POST")  ? api_checkpoints_post(req, run)
               : is(req, "GET") ? api_checkpoints_get(run)
                                : not_allowed(req);
    }
    if (n == 4 && strcmp(what, "series") == 0) {
        req->route = R_RUN;
        return is(req, "GET") ? api_run_series(req, run) : not_allowed(req);
    }
    if (n == 4 && strcmp(what, "recovery") == 0) {
        req->route = R_RECOVERY;
        return is(req, "GET") ? api_recovery(req, run) : not_allowed(req);
    }
    return json_error(404, "not_found", "no such resource: %s", req->url);
}

/* Fills `out` for a complete request; see server.h. */
void server_route(request *req, response *out)
{
    char path[2048];
    if (strlen(req->url) >= sizeof path) {
        *out = json_error(414, "uri_too_long", "the path is longer than %zu bytes",
                          sizeof path - 1);
        return;
    }
    strcpy(path, req->url);
    char *parts[5] = {0};
    int n = split_path(path, parts);
    if (n == 1 && strcmp(parts[0], "healthz") == 0) {
        req->route = R_HEALTH;
        *out = is(req, "GET") ? json_ok(200, json_pack("{s:s}", "status", "ok"))
                              : not_allowed(req);
        return;
    }
    /* Authorisation in one place: writes were decided on the headers
     * (http.c), reads of the API and the metrics are decided here. */
    int api = n >= 1 && (strcmp(parts[0], "api") == 0 || strcmp(parts[0], "metrics") == 0);
    if (api && (is(req, "GET") || is(req, "HEAD")) && require_reader(req, out))
        return;
    if (n == 1 && strcmp(parts[0], "metrics") == 0) {
        req->route = R_METRICS;
        *out = is(req, "GET") ? api_metrics() : not_allowed(req);
        return;
    }
    if (n < 2 || strcmp(parts[0], "api") != 0) {
        req->route = R_STATIC;
        if (!static_file(req, req->url, out))
            *out = json_error(404, "not_found", "no such resource: %s", req->url);
        return;
    }
    if (strcmp(parts[1], "recipes") == 0 && n <= 3) {
        req->route = R_RECIPES;
        *out = n == 2 ? (is(req, "POST") ? api_recipe_post(req) : not_allowed(req))
                      : (is(req, "GET") ? api_recipe_get(parts[2]) : not_allowed(req));
    } else if (strcmp(parts[1], "runs") == 0) {
        *out = run_routes(req, parts, n);
    } else if (strcmp(parts[1], "compare") == 0 && n == 2) {
        req->route = R_COMPARE;
        *out = is(req, "GET") ? api_compare(req) : not_allowed(req);
    } else if (strcmp(parts[1], "compare") == 0 && n == 3 && strcmp(parts[2], "strip") == 0) {
        req->route = R_COMPARE;
        *out = is(req, "GET") ? api_compare_strip(req) : not_allowed(req);
    } else if (strcmp(parts[1], "audit") == 0 && n == 2) {
        req->route = R_AUDIT;
        *out = is(req, "GET") ? api_audit(req) : not_allowed(req);
    } else {
        *out = json_error(404, "not_found", "no such resource: %s", req->url);
    }
}
