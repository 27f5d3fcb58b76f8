/* Shared pieces of the ordo command-line tool (uses only ordo.h). */
#ifndef ORDO_CLI_H
#define ORDO_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "ordo.h"

/* Exit codes scripts can rely on. */
enum {
    EXIT_OK = 0,       /* success */
    EXIT_FAILURE_ = 1, /* the command failed */
    EXIT_USAGE = 2,    /* the command line was wrong */
    EXIT_DIVERGED = 3 /* compare: the runs disagree (divergent step, other digest kind, conflict) */
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

/* One option of a command, for cli_parse. What it does: its value goes
 * to *text, or *flag is set to 1, or (key != 0) the parser's handler is
 * called with the key; with none of them it is refused as unknown. */
typedef struct cli_option {
    const char *name; /* without "--"; NULL ends a table */
    int takes_value;  /* 1: --name VALUE or --name=VALUE */
    const char **text;
    int *flag;
    int key;
} cli_option;

/* A command's options: its table (-h and --help are added), the help they
 * print, and the handler of options with a key, which returns 0 to go on
 * or the exit code, having printed why. */
typedef struct cli_parser {
    const char *command; /* as in "ordo COMMAND: ..." */
    const char *help;
    const cli_option *options;
    int (*handle)(int key, const char *value, void *context);
    void *context;
} cli_parser;

/* cli_parse's answer when the command goes on with its operands. */
#define CLI_PARSED (-1)

/* Parses argv's options (argv[0] is the command's name; GNU order: options
 * and operands may mix) in order: returns CLI_PARSED with *first the index
 * of the first operand in the permuted argv, or the exit code the command
 * returns: EXIT_OK after printing the help, EXIT_USAGE after naming an
 * option it refused, or what a handler returned. */
int cli_parse(const cli_parser *parser, int argc, char **argv, int *first);

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
int cmd_batch(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_recipe(int argc, char **argv);
int cmd_shard(int argc, char **argv);
int cmd_tokens(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
