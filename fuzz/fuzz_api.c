/* Fuzzes the service's request body parsers: the bytes of a steps post
 * (whole steps and lane reports) through the body limits, the key checks
 * and the parsers, with the library's own validation behind them, on a
 * ledger-free path. */
#include <stddef.h>

#include "../server/server.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    server_fuzz_bodies((const char *)data, size);
    return 0;
}
