/* Fuzzes the service's request body parsers: the JSON of a steps post
 * (whole steps and lane reports), with the library's own validation
 * behind them, on an in-memory ledger-free path. */
#include <jansson.h>
#include <stdlib.h>

#include "../server/server.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    json_error_t jerr;
    json_t *body = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!body)
        return 0;
    server_fuzz_bodies(body);
    json_decref(body);
    return 0;
}
