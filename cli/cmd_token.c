/* ordo token create: API tokens for the service. */
#include <getopt.h>
#include <string.h>

#include "cli.h"

static const char token_help[] =
    "usage: ordo token create --role writer|reader [--name NAME] [--db PATH]\n\n"
    "Creates an API token for `ordo serve` and prints it once: only its\n"
    "SHA-256 is stored, so it cannot be shown again. Writers may report and\n"
    "read; readers may only read.\n\n"
    "  --role ROLE  writer or reader\n"
    "  --name NAME  what the token is for (default: the role)\n"
    "  --db PATH    the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  -h, --help   this help\n";

/* Entry point of `ordo token`. */
int cmd_token(int argc, char **argv)
{
    static const struct option options[] = {{"db", required_argument, NULL, 'd'},
                                            {"role", required_argument, NULL, 'r'},
                                            {"name", required_argument, NULL, 'n'},
                                            {"help", no_argument, NULL, 'h'},
                                            {0, 0, 0, 0}};
    const char *db = NULL, *role = NULL, *name = NULL;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (opt == 'd')
            db = optarg;
        else if (opt == 'r')
            role = optarg;
        else if (opt == 'n')
            name = optarg;
        else if (opt == 'h')
            return fputs(token_help, stdout), EXIT_OK;
        else
            return cli_option_error("token", argv);
    }
    if (argc - optind != 1 || strcmp(argv[optind], "create") != 0)
        return cli_usage_error("token", "the only subcommand is 'create'");
    if (!role || (strcmp(role, "writer") != 0 && strcmp(role, "reader") != 0))
        return cli_usage_error("token", "--role must be writer or reader");
    ordo_ledger *ledger = cli_open("token", db, 0);
    if (!ledger)
        return EXIT_FAILURE_;
    char token[ORDO_TOKEN_SIZE];
    ordo_error err;
    ordo_status status = ordo_token_create(ledger, name ? name : role, role, token, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("token", &err);
    printf("%s\n", token);
    return EXIT_OK;
}
