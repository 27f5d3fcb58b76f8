/* ordo token create | list | revoke: API tokens for the service. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char token_help[] =
    "usage: ordo token create --role writer|reader [--name NAME] [--db PATH]\n"
    "       ordo token list [--json] [--db PATH]\n"
    "       ordo token revoke ID [--db PATH]\n\n"
    "create makes an API token for `ordo serve` and prints it once: only its\n"
    "SHA-256 is stored, so it cannot be shown again. Writers may report and\n"
    "read; readers may only read.\n"
    "list shows every token's id, name, role, when it was created and revoked,\n"
    "and its fingerprint (the first 12 hex digits of its SHA-256, what\n"
    "`printf %%s TOKEN | sha256sum` starts with); never a secret.\n"
    "revoke ID refuses that token from the next request on, on a running server\n"
    "too.\n\n"
    "  --role ROLE  writer or reader\n"
    "  --name NAME  what the token is for (default: the role)\n"
    "  --json       list as JSON\n"
    "  --db PATH    the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  -h, --help   this help\n";

static int token_create(const char *db, const char *role, const char *name)
{
    ordo_token_role role_value;
    if (ordo_token_role_parse(role, &role_value, NULL) != ORDO_OK)
        return cli_usage_error("token", "--role must be writer or reader");
    ordo_ledger *ledger = cli_open("token", db, 0);
    if (!ledger)
        return EXIT_FAILURE_;
    char token[ORDO_TOKEN_SIZE];
    ordo_error err;
    ordo_status status = ordo_token_create(ledger, name ? name : role, role_value, token, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("token", &err);
    printf("%s\n", token);
    return EXIT_OK;
}

static void print_tokens(const ordo_token_info *tokens, size_t count, int as_json)
{
    if (as_json) {
        json_t *list = json_array();
        for (size_t i = 0; i < count; i++) {
            const ordo_token_info *t = &tokens[i];
            json_array_append_new(
                list, json_pack("{s:I, s:s, s:s, s:s, s:o, s:s}", "id", (json_int_t)t->id, "name",
                                t->name, "role", ordo_token_role_name(t->role), "created_at",
                                t->created_at, "revoked_at",
                                t->revoked_at[0] ? json_string(t->revoked_at) : json_null(),
                                "fingerprint", t->fingerprint));
        }
        char *text = json_dumps(list, JSON_COMPACT);
        printf("%s\n", text ? text : "[]");
        free(text);
        json_decref(list);
        return;
    }
    printf("%-6s %-7s %-13s %-24s %-24s %s\n", "ID", "ROLE", "FINGERPRINT", "CREATED", "REVOKED",
           "NAME");
    for (size_t i = 0; i < count; i++) {
        const ordo_token_info *t = &tokens[i];
        printf("%-6lld %-7s %-13s %-24s %-24s %s\n", (long long)t->id,
               ordo_token_role_name(t->role), t->fingerprint, t->created_at,
               t->revoked_at[0] ? t->revoked_at : "-", t->name);
    }
}

static int token_list(const char *db, int as_json)
{
    ordo_ledger *ledger = cli_open("token", db, ORDO_OPEN_READONLY);
    if (!ledger)
        return EXIT_FAILURE_;
    ordo_token_list *tokens = NULL;
    ordo_error err;
    ordo_status status = ordo_tokens_list(ledger, &tokens, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("token", &err);
    print_tokens(tokens->items, tokens->count, as_json);
    ordo_token_list_free(tokens);
    return EXIT_OK;
}

static int token_revoke(const char *db, const char *id_text)
{
    char *end = NULL;
    long long id = id_text ? strtoll(id_text, &end, 10) : 0;
    if (!id_text || !*id_text || *end || id < 1)
        return cli_usage_error("token",
                               "revoke needs a token id (a whole number from "
                               "'ordo token list'), not '%s'",
                               id_text ? id_text : "");
    ordo_ledger *ledger = cli_open("token", db, 0);
    if (!ledger)
        return EXIT_FAILURE_;
    ordo_error err;
    ordo_status status = ordo_token_revoke(ledger, id, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("token", &err);
    printf("token %lld revoked\n", id);
    return EXIT_OK;
}

/* Entry point of `ordo token`. */
int cmd_token(int argc, char **argv)
{
    const char *db = NULL, *role = NULL, *name = NULL;
    int as_json = 0;
    const cli_option options[] = {{"db", 1, .text = &db},
                                  {"role", 1, .text = &role},
                                  {"name", 1, .text = &name},
                                  {"json", 0, .flag = &as_json},
                                  {0}};
    const cli_parser parser = {.command = "token", .help = token_help, .options = options};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    const char *sub = first < argc ? argv[first] : "";
    int rest = argc - first - 1;
    if (!strcmp(sub, "create") && rest == 0)
        return token_create(db, role, name);
    if (!strcmp(sub, "list") && rest == 0)
        return token_list(db, as_json);
    if (!strcmp(sub, "revoke") && rest <= 1)
        return token_revoke(db, rest == 1 ? argv[first + 1] : NULL);
    return cli_usage_error("token", "the subcommands are 'create', 'list' and 'revoke ID'");
}
