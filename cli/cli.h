/* Shared pieces of the ordo command-line tool (uses only ordo.h). */
#ifndef ORDO_CLI_H
#define ORDO_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "ordo.h"

/* Exit codes scripts can rely on. */
enum {
    EXIT_OK = 0,      /* success */
    EXIT_FAILURE_ = 1, /* the command failed */
    EXIT_USAGE = 2,   /* the command line was wrong */
    EXIT_DIVERGED = 3 /* compare: the runs diverge */
};

/* One subcommand: its name, entry point and one-line summary. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

/* The ledger path: --db if given, else $ORDO_DB, else ./ordo.db. */
const char *cli_db_path(const char *option);

/* Opens the ledger or prints why not to stderr as "ordo CMD: message";
 * returns NULL on failure. */
ordo_ledger *cli_open(const char *command, const char *db_option, unsigned flags);

/* Prints "ordo CMD: message" to stderr and returns EXIT_FAILURE_. */
int cli_fail(const char *command, const ordo_error *err);

/* Prints "ordo CMD: <formatted>" and a hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Usage error for the option getopt_long refused (unknown, or missing its
 * value), naming it as typed; returns EXIT_USAGE. */
int cli_option_error(const char *command, char **argv);

/* Prints a JSON value to stdout (indented) and a newline; steals `value`.
 * Returns EXIT_OK, or EXIT_FAILURE_ when it could not be written. */
int cli_print_json(json_t *value);

/* The value of one of the library's JSON views (ordo_run_info_json, ...;
 * ordo.h), which it frees; NULL when `text` is NULL. A new reference. */
json_t *cli_view(char *text);

/* Subcommands. */
int cmd_migrate(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_recipe(int argc, char **argv);
int cmd_shard(int argc, char **argv);
int cmd_tokens(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
