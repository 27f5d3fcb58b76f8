/* Verifying batch digests (docs/ledger.md, "Recording guarantees") beside
 * the inserts of a batch.
 *
 * Each reported step with lane digests must carry batch digest =
 * SHA-256(lane digests). Hashing is a fifth of the recording cost, so for
 * large batches a helper thread checks the digests while the calling
 * thread inserts; the caller joins before committing and rolls back on a
 * mismatch. The helper only reads the caller's steps and has its own
 * digest context. */
#include <string.h>

#include <openssl/evp.h>

#include "step_verify.h"

#define THREAD_THRESHOLD 64 /* smaller batches are checked inline */

static size_t first_mismatch(EVP_MD_CTX *ctx, const ordo_step *steps, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const ordo_step *s = &steps[i];
        if (!s->lane_digests)
            continue;
        unsigned char batch[ORDO_DIGEST_SIZE];
        ordo__sha256_with(ctx, s->lane_digests, (size_t)s->lane_count * ORDO_DIGEST_SIZE, batch);
        if (memcmp(batch, s->batch_digest, ORDO_DIGEST_SIZE) != 0)
            return i;
    }
    return count;
}

static void *verify_thread(void *arg)
{
    ordo__digest_check *check = arg;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new(); /* NULL falls back to one-shot hashing */
    check->mismatch = first_mismatch(ctx, check->steps, check->count);
    EVP_MD_CTX_free(ctx);
    return NULL;
}

/* Starts checking `count` steps (borrowed until finish); on a helper
 * thread when the batch is large and a thread can be had. */
void ordo__digest_check_start(ordo__digest_check *check, const ordo_step *steps, size_t count)
{
    check->steps = steps;
    check->count = count;
    check->mismatch = count;
    check->threaded = count >= THREAD_THRESHOLD &&
                      pthread_create(&check->thread, NULL, verify_thread, check) == 0;
}

/* Waits for the check (or runs it now with `ctx`); returns the index of the
 * first step whose batch digest is wrong, or the step count when none. */
size_t ordo__digest_check_finish(ordo__digest_check *check, EVP_MD_CTX *ctx)
{
    if (check->threaded)
        pthread_join(check->thread, NULL);
    else
        check->mismatch = first_mismatch(ctx, check->steps, check->count);
    check->threaded = 0;
    return check->mismatch;
}
