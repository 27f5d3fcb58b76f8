/* Watched runs of the ordo binary; see process.h. */
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void exec_child(const char *bin, const char *const *env, const char *const *args,
                       unsigned deadline, const char *out_path, const char *err_path)
{
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(126);
    for (int i = 0; env && env[i]; i++)
        putenv((char *)env[i]);
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    for (int i = 0; args[i] && argc < 63; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    unsetenv("ORDO_DB");
    alarm(deadline);
    execv(bin, argv);
    _exit(127);
}

/* Runs and watches one ordo command; see process.h. */
watched_run run_ordo_watched(const char *const *env, const char *const *args, unsigned deadline)
{
    const char *bin = getenv("ORDO_BIN");
    if (!bin)
        test_fail(__FILE__, __LINE__, "ORDO_BIN is not set (run through make)");
    char out_path[1024], err_path[1024];
    snprintf(out_path, sizeof out_path, "%s", test_path(".stdout"));
    snprintf(err_path, sizeof err_path, "%s", test_path(".stderr"));
    fflush(NULL);
    double start = now_seconds();
    pid_t pid = fork();
    if (pid < 0)
        test_fail(__FILE__, __LINE__, "cannot fork: %s", strerror(errno));
    if (pid == 0)
        exec_child(bin, env, args, deadline, out_path, err_path);
    int status = 0;
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    watched_run run = {0};
    run.seconds = now_seconds() - start;
    run.max_rss_kb = usage.ru_maxrss;
    run.result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.result.out = test_read_file(out_path, NULL);
    run.result.err = test_read_file(err_path, NULL);
    return run;
}
