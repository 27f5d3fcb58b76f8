/* Fuzzes the parsers of what crosses process boundaries: checkpoint
 * states (as a resume, a merge and the ledger's comparison see them) and
 * recovery manifests. */
#include <stdlib.h>
#include <string.h>

#include "ordo.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    ordo_error err;
    int lanes = 0;
    int64_t step = 0;
    int same = 0;
    if (ordo_checkpoint_describe(data, size, &lanes, &step, &err) == ORDO_OK &&
        (ordo_checkpoint_equivalent(data, size, data, size, &same, NULL, &err) != ORDO_OK || !same))
        abort(); /* a state is where itself is */
    const unsigned char *parts[2] = {data, data + size / 2};
    size_t sizes[2] = {size / 2, size - size / 2};
    unsigned char *merged = NULL;
    size_t merged_size = 0;
    int more = 0;
    ordo_checkpoint_equivalent(parts[0], sizes[0], parts[1], sizes[1], &same, &more, &err);
    if (ordo_checkpoint_merge(parts, sizes, 2, &merged, &merged_size, &err) == ORDO_OK) {
        if (ordo_checkpoint_describe(merged, merged_size, &lanes, &step, &err) != ORDO_OK)
            abort(); /* a merge always yields a valid state */
        ordo_free(merged);
    }
    ordo_recovery_manifest_check((const char *)data, size, &err);
    return 0;
}
