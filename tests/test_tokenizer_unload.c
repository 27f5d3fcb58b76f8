/* libordo.so unloaded with dlclose() while a thread that encoded through
 * it is still alive: the thread's kept state (piece cache, tokenizer.json
 * scratch) must not call into the unloaded code when that thread ends,
 * and the library loads and encodes again afterwards. (What such a
 * thread kept is left unfreed: thread_state.h.) */
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "ordo.h"

/* A tokenizer.json where "abcab" is abc ab and "abc" is abc (ids 4 3 4),
 * written to the test's folder as `name`; its path. */
static const char *tiny_file(const char *name)
{
    static const char json[] =
        "{\"pre_tokenizer\":{\"type\":\"WhitespaceSplit\"},\"model\":{\"type\":\"BPE\","
        "\"vocab\":{\"a\":0,\"b\":1,\"c\":2,\"ab\":3,\"abc\":4},\"merges\":[\"a b\",\"ab c\"]}}";
    const char *path = test_path(name);
    test_write_file(path, json, sizeof json - 1);
    return path;
}

/* The forked child ended by exiting 0 (a signal is named). */
static void assert_child_succeeded(pid_t child)
{
    int status;
    ASSERT(waitpid(child, &status, 0) == child);
    if (WIFSIGNALED(status))
        test_fail(__FILE__, __LINE__, "the child was killed by signal %d", WTERMSIG(status));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ_INT(WEXITSTATUS(status), 0);
}

typedef struct {
    void *lib;
    const char *json;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int encoded, may_end, failed;
    size_t count;
} scene;

/* Opens the file through the loaded library, encodes a text, then waits
 * until the main thread lets it end. */
static void *encoder(void *arg)
{
    scene *s = arg;
    ordo_status (*open_json)(const char *, ordo_tokenizer **, ordo_error *) = (ordo_status(*)(
        const char *, ordo_tokenizer **, ordo_error *))dlsym(s->lib, "ordo_tokenizer_open_json");
    ordo_status (*encode)(const ordo_tokenizer *, const char *, size_t, uint32_t **, size_t *,
                          ordo_error *) =
        (ordo_status(*)(const ordo_tokenizer *, const char *, size_t, uint32_t **, size_t *,
                        ordo_error *))dlsym(s->lib, "ordo_tokenizer_encode");
    void (*close_tokenizer)(ordo_tokenizer *) =
        (void (*)(ordo_tokenizer *))dlsym(s->lib, "ordo_tokenizer_close");
    void (*free_ids)(void *) = (void (*)(void *))dlsym(s->lib, "ordo_free");
    ordo_tokenizer *t = NULL;
    ordo_error err;
    uint32_t *ids = NULL;
    if (!open_json || !encode || !close_tokenizer || !free_ids ||
        open_json(s->json, &t, &err) != ORDO_OK ||
        encode(t, "abcab abc", 9, &ids, &s->count, &err) != ORDO_OK)
        s->failed = 1;
    if (ids)
        free_ids(ids);
    if (t)
        close_tokenizer(t);
    pthread_mutex_lock(&s->lock);
    s->encoded = 1;
    pthread_cond_broadcast(&s->changed);
    while (!s->may_end)
        pthread_cond_wait(&s->changed, &s->lock);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* One load, encode on a thread, unload, then the thread ends; the count
 * of ids it got. */
static size_t load_encode_unload(const char *so, const char *json)
{
    scene s = {dlopen(so, RTLD_NOW | RTLD_LOCAL),
               json,
               PTHREAD_MUTEX_INITIALIZER,
               PTHREAD_COND_INITIALIZER,
               0,
               0,
               0,
               0};
    if (!s.lib)
        test_fail(__FILE__, __LINE__, "dlopen %s: %s", so, dlerror());
    pthread_t thread;
    ASSERT(pthread_create(&thread, NULL, encoder, &s) == 0);
    pthread_mutex_lock(&s.lock);
    while (!s.encoded)
        pthread_cond_wait(&s.changed, &s.lock);
    pthread_mutex_unlock(&s.lock);
    ASSERT(!s.failed);
    ASSERT(dlclose(s.lib) == 0);
    /* the library is really gone, so the thread's end would run freed code */
    ASSERT(dlopen(so, RTLD_NOW | RTLD_NOLOAD) == NULL);
    pthread_mutex_lock(&s.lock);
    s.may_end = 1;
    pthread_cond_broadcast(&s.changed);
    pthread_mutex_unlock(&s.lock);
    ASSERT(pthread_join(thread, NULL) == 0);
    return s.count;
}

TEST(a_thread_outliving_a_dlclose_of_the_library_ends_cleanly)
{
    const char *ordo = getenv("ORDO_BIN");
    if (!ordo)
        test_fail(__FILE__, __LINE__, "ORDO_BIN is not set (run through make)");
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", ordo);
    char so[4200];
    snprintf(so, sizeof so, "%s/libordo.so", dirname(bin));
    const char *path = tiny_file("tokenizer name with spaces.json");
    /* In a child that ends with _exit: what the threads kept is left
     * behind by design, which a leak checker at exit would report. */
    pid_t child = fork();
    ASSERT(child >= 0);
    if (child == 0) {
        /* "abcab" is abc ab, "abc" is abc: three ids, on each load */
        size_t first = load_encode_unload(so, path), second = load_encode_unload(so, path);
        _exit(first == 3 && second == 3 ? 0 : 1);
    }
    assert_child_succeeded(child);
}

static ordo_tokenizer *busy_tokenizer; /* reachable to the end (the child never closes it) */
static atomic_int busy_encoded;

/* Encodes until the process ends, checking every result. */
static void *encode_forever(void *arg)
{
    (void)arg;
    for (;;) {
        uint32_t *ids = NULL;
        size_t count = 0;
        ordo_error err;
        if (ordo_tokenizer_encode(busy_tokenizer, "abcab abc", 9, &ids, &count, &err) != ORDO_OK ||
            count != 3 || ids[0] != 4 || ids[1] != 3 || ids[2] != 4)
            _exit(3);
        ordo_free(ids);
        atomic_store(&busy_encoded, 1);
    }
    return NULL;
}

/* The library's end-of-process work (it deletes the thread-state key)
 * runs while another thread is still encoding, as a Python daemon thread
 * may be: no crash, no wrong ids, and under TSan no race. */
TEST(exit_while_a_thread_encodes_is_clean)
{
    const char *path = tiny_file("tokenizer.json");
    fflush(NULL);
    pid_t child = fork();
    ASSERT(child >= 0);
    if (child == 0) {
        ordo_error err;
        if (ordo_tokenizer_open_json(path, &busy_tokenizer, &err) != ORDO_OK)
            _exit(2);
        pthread_t thread;
        if (pthread_create(&thread, NULL, encode_forever, NULL) != 0)
            _exit(2);
        while (!atomic_load(&busy_encoded))
            sched_yield();
        exit(0); /* the worker is still encoding */
    }
    assert_child_succeeded(child);
}
