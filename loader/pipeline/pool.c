/* Worker pools: `read` threads and `tokenize` threads per loader. Items
 * flow read -> tokenize -> done; the consumer takes them back strictly in
 * their lane's order (ordo__pool_wait), so worker timing never reaches the
 * packer. One mutex guards the queues and the done flags. */
#include <stdlib.h>

#include "pipeline.h"

typedef struct {
    ordo_loader *loader;
    int tokenizer; /* 0: read worker, 1: tokenize worker */
} worker_arg;

static ordo__work *pop(ordo__work **head, ordo__work **tail)
{
    ordo__work *w = *head;
    if (w) {
        *head = w->next;
        if (!*head)
            *tail = NULL;
        w->next = NULL;
    }
    return w;
}

static void push(ordo__work **head, ordo__work **tail, ordo__work *w)
{
    w->next = NULL;
    if (*tail)
        (*tail)->next = w;
    else
        *head = w;
    *tail = w;
}

static void *worker(void *arg)
{
    worker_arg *a = arg;
    ordo_loader *l = a->loader;
    int tokenizer = a->tokenizer;
    free(a);
    pthread_mutex_lock(&l->mutex);
    for (;;) {
        ordo__work **head = tokenizer ? &l->tokenize_head : &l->read_head;
        ordo__work **tail = tokenizer ? &l->tokenize_tail : &l->read_tail;
        pthread_cond_t *ready = tokenizer ? &l->tokenize_ready : &l->read_ready;
        while (!*head && !l->stopping)
            pthread_cond_wait(ready, &l->mutex);
        if (l->stopping)
            break;
        ordo__work *w = pop(head, tail);
        pthread_mutex_unlock(&l->mutex);
        if (tokenizer)
            ordo__op_tokenize(l->recipe, w);
        else
            ordo__op_read(l->recipe, l->chunk_cache, w);
        pthread_mutex_lock(&l->mutex);
        if (tokenizer) {
            w->done = 1;
            pthread_cond_broadcast(&l->work_done);
        } else {
            push(&l->tokenize_head, &l->tokenize_tail, w);
            pthread_cond_signal(&l->tokenize_ready);
        }
    }
    pthread_mutex_unlock(&l->mutex);
    return NULL;
}

/* Starts read_workers + tokenize_workers threads. */
ordo_status ordo__pool_start(ordo_loader *l, ordo_error *err)
{
    int total = l->read_workers + l->tokenize_workers;
    l->threads = calloc((size_t)total, sizeof *l->threads);
    if (!l->threads)
        return ordo__error(err, ORDO_NOMEM, "out of memory starting workers");
    for (int i = 0; i < total; i++) {
        worker_arg *a = malloc(sizeof *a);
        if (a) {
            a->loader = l;
            a->tokenizer = i >= l->read_workers;
        }
        if (!a || pthread_create(&l->threads[i], NULL, worker, a) != 0) {
            free(a);
            return ordo__error(err, ORDO_NOMEM, "cannot start worker thread %d of %d", i + 1,
                               total);
        }
        l->thread_count++;
    }
    return ORDO_OK;
}

/* Stops and joins the workers; items in queues are abandoned. */
void ordo__pool_stop(ordo_loader *l)
{
    pthread_mutex_lock(&l->mutex);
    l->stopping = 1;
    pthread_cond_broadcast(&l->read_ready);
    pthread_cond_broadcast(&l->tokenize_ready);
    pthread_mutex_unlock(&l->mutex);
    for (int i = 0; i < l->thread_count; i++)
        pthread_join(l->threads[i], NULL);
    free(l->threads);
    l->threads = NULL;
    l->thread_count = 0;
}

/* Queues a chain of work items for reading. */
void ordo__pool_submit(ordo_loader *l, ordo__work *first)
{
    if (!first)
        return;
    pthread_mutex_lock(&l->mutex);
    while (first) {
        ordo__work *next = first->next;
        first->done = 0;
        push(&l->read_head, &l->read_tail, first);
        first = next;
    }
    pthread_cond_broadcast(&l->read_ready);
    pthread_mutex_unlock(&l->mutex);
}

/* Waits for one item. */
void ordo__pool_wait(ordo_loader *l, ordo__work *w)
{
    pthread_mutex_lock(&l->mutex);
    while (!w->done)
        pthread_cond_wait(&l->work_done, &l->mutex);
    pthread_mutex_unlock(&l->mutex);
}

/* Debug: any finished item in flight among `count`. */
ordo__work *ordo__pool_wait_any(ordo_loader *l, ordo__work *const *items, int count)
{
    ordo__work *found = NULL;
    pthread_mutex_lock(&l->mutex);
    while (!found) {
        for (int i = 0; i < count && !found; i++)
            if (items[i]->seq != UINT64_MAX && items[i]->done)
                found = items[i];
        if (!found)
            pthread_cond_wait(&l->work_done, &l->mutex);
    }
    pthread_mutex_unlock(&l->mutex);
    return found;
}
