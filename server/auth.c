/* Bearer tokens: writes need a writer token; reads are open on loopback or
 * with --public-read, else need a reader (or writer) token. */
#include <string.h>
#include <strings.h>

#include "server.h"

/* The role of the request's bearer token: 1 found (role filled), 0 none
 * given, -1 given but refused (*error filled). */
static int bearer_role(const request *req, ordo_token_role *role, response *error)
{
    const char *header =
        MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, "Authorization");
    if (!header)
        return 0;
    if (!server->loopback && !server->tls_cert && !server->insecure) {
        *error = json_error(403, "insecure",
                            "tokens are refused over plain HTTP on a "
                            "non-loopback address (start ordo serve with "
                            "--tls-cert and --tls-key, or --insecure)");
        return -1;
    }
    if (strncasecmp(header, "Bearer ", 7) != 0) {
        *error = json_error(401, "unauthorized", "Authorization must be 'Bearer TOKEN'");
        return -1;
    }
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    if (!ledger) {
        *error = status_error(&err);
        return -1;
    }
    ordo_status status = ordo_token_check(ledger, header + 7, role, &err);
    if (status == ORDO_NOTFOUND) {
        *error = json_error(401, "unauthorized", "unknown or revoked token");
        return -1;
    }
    if (status != ORDO_OK) {
        *error = status_error(&err);
        return -1;
    }
    return 1;
}

int require_writer(const request *req, response *error)
{
    ordo_token_role role;
    int found = bearer_role(req, &role, error);
    if (found < 0)
        return -1;
    if (found == 0) {
        *error = json_error(401, "unauthorized",
                            "writing needs a writer token "
                            "(Authorization: Bearer TOKEN)");
        return -1;
    }
    if (role != ORDO_ROLE_WRITER) {
        *error = json_error(403, "forbidden", "this token may only read");
        return -1;
    }
    return 0;
}

int require_reader(const request *req, response *error)
{
    ordo_token_role role;
    int found = bearer_role(req, &role, error);
    if (found < 0)
        return -1;
    if (found == 0 && !server->loopback && !server->public_read) {
        *error = json_error(401, "unauthorized",
                            "reading needs a token on a public listener "
                            "(or start the server with --public-read)");
        return -1;
    }
    return 0;
}
