/* ordo migrate: create the ledger or bring its schema up to date. */
#include "cli.h"

static const char migrate_help[] =
    "usage: ordo migrate [--db PATH]\n\n"
    "Creates the ledger if it does not exist and applies every pending schema\n"
    "migration, each in its own transaction. A ledger from a newer ordo is\n"
    "refused and left untouched.\n\n"
    "  --db PATH   the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  -h, --help  this help\n";

/* Entry point of `ordo migrate`. */
int cmd_migrate(int argc, char **argv)
{
    const char *db = NULL;
    const cli_option options[] = {{"db", 1, .text = &db}, {0}};
    const cli_parser parser = {.command = "migrate", .help = migrate_help, .options = options};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (first < argc)
        return cli_usage_error("migrate", "unexpected argument '%s'", argv[first]);
    ordo_ledger *ledger = cli_open("migrate", db, ORDO_OPEN_NO_MIGRATE);
    if (!ledger)
        return EXIT_FAILURE_;
    int from = 0, to = 0;
    ordo_error err;
    ordo_status status = ordo_ledger_migrate(ledger, &from, &to, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("migrate", &err);
    if (from == to)
        printf("ledger %s: schema version %d, up to date\n", cli_db_path(db), to);
    else
        printf("ledger %s: schema version %d -> %d\n", cli_db_path(db), from, to);
    return EXIT_OK;
}
