/* Fuzzes the lane plan reader the service's run and segment posts go
 * through (ordo_lane_plan_parse): the bytes as a plan's JSON at a few
 * shapes, both bindings; whatever it accepts must pass the check. */
#include <stdlib.h>

#include "ordo.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static const int shapes[][2] = {{8, 2}, {8, 3}, {4, 4}, {1, 1}, {64, 8}};
    static const ordo_lane_binding bindings[] = {ORDO_BINDING_LOGICAL, ORDO_BINDING_RANK,
                                                 (ordo_lane_binding)7};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t b = 0; b < sizeof bindings / sizeof bindings[0]; b++) {
            int *ranks = NULL, count = 0;
            ordo_error err;
            if (ordo_lane_plan_parse(shapes[s][0], shapes[s][1], bindings[b], (const char *)data,
                                     size, &ranks, &count, &err) != ORDO_OK) {
                if (ranks || count)
                    abort(); /* a refusal hands nothing back */
                continue;
            }
            if (ordo_lane_plan_check(count, shapes[s][1], bindings[b], ranks, &err) != ORDO_OK)
                abort(); /* what it read is a valid plan */
            ordo_free(ranks);
        }
    return 0;
}
