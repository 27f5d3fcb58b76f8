/* ordo: one binary in front of the ledger, the loader and the service. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_command commands[] = {
    {"migrate", cmd_migrate, "create the ledger or bring its schema up to date"},
    {"runs", cmd_runs, "list the runs in the ledger"},
    {"show", cmd_show, "show one run: segments, lane plans, checkpoints, events, steps"},
    {"shard", cmd_shard, "turn .txt/.jsonl files into multi-frame .jsonl.zst shards"},
    {"recipe", cmd_recipe, "recipe check FILE: validate a recipe and print its id"},
    {"index", cmd_index, "index a recipe's shards and token estimates into the ledger"},
    {"run", cmd_run, "play a data-parallel job and record every step"},
    {"resume", cmd_resume, "continue a run from a checkpoint at another world size"},
    {"compare", cmd_compare, "compare two runs step by step"},
    {"batch", cmd_batch, "what the model saw at a step: its batch regenerated, checked, traced"},
    {"tokens", cmd_tokens, "a file's token ids under a tiktoken-compatible encoding"},
    {"serve", cmd_serve, "serve the ledger over HTTP (API for jobs and the dashboard)"},
    {"token", cmd_token, "token create, list, revoke: API tokens for the service"},
};

#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

static void print_help(FILE *out)
{
    fprintf(out, "usage: ordo COMMAND [OPTIONS]\n\n"
                 "ordo records and checks what an elastically deterministic data loader\n"
                 "fed a training job, in a SQLite ledger.\n\ncommands:\n");
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nEvery command answers --help. The ledger is --db PATH, else $ORDO_DB,\n"
                 "else ./ordo.db. Exit codes: 0 ok, 1 failure, 2 usage error, 3 the runs\n"
                 "compared disagree (ordo compare: a divergent step, digests of different\n"
                 "kinds, or a conflict).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        print_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ordo %s (ledger schema %d)\n", ordo_version_string(), ordo_schema_version_latest());
        return EXIT_OK;
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ordo: unknown command '%s'\nTry 'ordo --help'.\n", argv[1]);
    return EXIT_USAGE;
}
