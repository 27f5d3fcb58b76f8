/* What a thread keeps between tokenizer calls (internal): its piece cache
 * (piece_cache.c) and its tokenizer.json scratch (hf_scratch.c), each made
 * on first use by its owner and freed when the thread ends. One pthread
 * key holds both; it is deleted when the library is unloaded, so a thread
 * that outlives a dlclose() of libordo.so never runs freed code at its
 * exit (what it kept is then left, not freed). */
#ifndef ORDO_THREAD_STATE_H
#define ORDO_THREAD_STATE_H

typedef struct ordo__piece_cache ordo__piece_cache;
typedef struct ordo__hf_scratch ordo__hf_scratch;

typedef struct ordo__thread_state {
    ordo__piece_cache *cache;  /* NULL until the piece cache makes it */
    ordo__hf_scratch *scratch; /* NULL until hf_scratch.c makes it */
} ordo__thread_state;

/* The calling thread's state (made zeroed on first use), or NULL when
 * memory or keys ran out; the thread owns it and what it points to. */
ordo__thread_state *ordo__thread_state_get(void);

#endif
