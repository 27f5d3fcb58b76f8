/* Fuzzes the service's path parser: whatever a request line holds, a path
 * it accepts has no empty, "." or ".." segment and no encoded separator,
 * so authorisation and dispatch (which share the parse) see one path. */
#include <stdlib.h>
#include <string.h>

#include "../server/server.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *uri = malloc(size + 1);
    if (!uri)
        return 0;
    memcpy(uri, data, size);
    uri[size] = '\0';
    server_fuzz_path(uri);
    free(uri);
    return 0;
}
