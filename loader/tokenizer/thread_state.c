/* The tokenizer's per-thread state (thread_state.h) behind one pthread
 * key. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "hf_model.h"
#include "thread_state.h"

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static atomic_int key_made; /* unload() may clear it while threads read it */

/* A thread ends: what it kept is freed. */
static void destroy(void *p)
{
    ordo__thread_state *state = p;
    free(state->cache);
    if (state->scratch) {
        ordo__hf_scratch_free(state->scratch);
        free(state->scratch);
    }
    free(state);
}

static void make_key(void)
{
    key_made = pthread_key_create(&key, destroy) == 0;
}

/* The library is unloaded (or the process ends): no thread may call
 * destroy() after this, since its code may be gone. */
__attribute__((destructor)) static void unload(void)
{
    if (key_made)
        pthread_key_delete(key);
    key_made = 0;
}

/* The calling thread's state; see thread_state.h. */
ordo__thread_state *ordo__thread_state_get(void)
{
    pthread_once(&key_once, make_key);
    if (!key_made)
        return NULL;
    ordo__thread_state *state = pthread_getspecific(key);
    if (!state) {
        state = calloc(1, sizeof *state);
        if (state && pthread_setspecific(key, state) != 0) {
            free(state);
            state = NULL;
        }
    }
    return state;
}
