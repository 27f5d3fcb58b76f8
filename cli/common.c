/* Ledger opening, error printing and JSON output shared by the commands. */
#include <stdarg.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --db, else $ORDO_DB, else ./ordo.db. */
const char *cli_db_path(const char *option)
{
    if (option)
        return option;
    const char *env = getenv("ORDO_DB");
    return env && *env ? env : "./ordo.db";
}

#define CLI_LOCK_TIMEOUT_MS 120000

/* Opens the ledger or explains why not. */
ordo_ledger *cli_open(const char *command, const char *db_option, unsigned flags)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    if (ordo_ledger_open(cli_db_path(db_option), flags, &ledger, &err) != ORDO_OK) {
        cli_fail(command, &err);
        return NULL;
    }
    /* a command waits out another's long write (an ingest, another job)
     * rather than failing, for a bounded time */
    ordo_ledger_set_lock_timeout(ledger, CLI_LOCK_TIMEOUT_MS);
    return ledger;
}

/* Prints a failure. */
int cli_fail(const char *command, const ordo_error *err)
{
    fprintf(stderr, "ordo %s: %s\n", command, err->message);
    return EXIT_FAILURE_;
}

/* Prints a usage error and the help hint. */
int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ordo %s: ", command);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'ordo %s --help'.\n", command);
    va_end(ap);
    return EXIT_USAGE;
}

/* The option getopt_long just refused, as the user typed it. */
int cli_option_error(const char *command, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (strncmp(arg, "--", 2) == 0) {
        size_t n = strcspn(arg, "=");
        return cli_usage_error(command, "unknown option, or one missing its value: '%.*s'", (int)n,
                               arg);
    }
    if (optopt > 0 && optopt < 128)
        return cli_usage_error(command, "unknown option, or one missing its value: '-%c'", optopt);
    return cli_usage_error(command, "unknown option '%s'", arg);
}

#define CLI_MAX_OPTIONS 32

/* getopt_long's table for `options`: option i answers 256 + i, --help 'h'. */
static void long_options(const cli_option *options, struct option *out)
{
    size_t n = 0;
    for (; options[n].name && n < CLI_MAX_OPTIONS; n++)
        out[n] = (struct option){options[n].name,
                                 options[n].takes_value ? required_argument : no_argument, NULL,
                                 256 + (int)n};
    out[n] = (struct option){"help", no_argument, NULL, 'h'};
    out[n + 1] = (struct option){0, 0, 0, 0};
}

/* The options of argv, in order, by the parser's table. */
int cli_parse(const cli_parser *parser, int argc, char **argv, int *first)
{
    struct option longs[CLI_MAX_OPTIONS + 2];
    long_options(parser->options, longs);
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        if (opt == 'h')
            return fputs(parser->help, stdout), EXIT_OK;
        const cli_option *o = opt >= 256 ? &parser->options[opt - 256] : NULL;
        int rc = 0;
        if (o && o->text)
            *o->text = optarg;
        else if (o && o->flag)
            *o->flag = 1;
        else if (o && o->key)
            rc = parser->handle(o->key, optarg, parser->context);
        else
            return cli_option_error(parser->command, argv);
        if (rc != 0)
            return rc;
    }
    *first = optind;
    return CLI_PARSED;
}

/* Prints JSON to stdout; steals `value`. */
int cli_print_json(json_t *value)
{
    int rc = value ? json_dumpf(value, stdout, JSON_INDENT(2)) : -1;
    json_decref(value);
    if (rc != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "ordo: cannot write JSON output\n");
        return EXIT_FAILURE_;
    }
    return EXIT_OK;
}

/* Parses a JSON view of the library (ordo.h), which it frees. */
json_t *cli_view(char *text)
{
    json_t *value = text ? json_loads(text, 0, NULL) : NULL;
    ordo_free(text);
    return value;
}
