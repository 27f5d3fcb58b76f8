/* The dashboard's files, compiled into the binary (scripts/embed.c): only
 * these names are ever served, so no request reaches the file system. */
#include <string.h>

#include "embedded.h"
#include "server.h"

static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return "application/octet-stream";
    if (!strcmp(dot, ".html"))
        return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js"))
        return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css"))
        return "text/css; charset=utf-8";
    if (!strcmp(dot, ".svg"))
        return "image/svg+xml";
    return "application/octet-stream";
}

/* Answers GET / and GET /static/NAME; see server.h. */
int static_file(request *req, const char *path, response *out)
{
    const char *name = NULL;
    if (!strcmp(path, "/") || !strcmp(path, "/index.html"))
        name = "index.html";
    else if (!strncmp(path, "/static/", 8))
        name = path + 8;
    if (!name)
        return 0;
    for (size_t i = 0; i < ordo__web_files_count; i++)
        if (!strcmp(ordo__web_files[i].name, name)) {
            if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
                *out = json_error(405, "method_not_allowed", "%s is not allowed on %s", req->method,
                                  path);
                return 1;
            }
            *out = (response){.status = 200,
                              .text = ordo__web_files[i].data,
                              .content_type = content_type(ordo__web_files[i].name),
                              .size = ordo__web_files[i].size};
            return 1;
        }
    return 0;
}
