/* ordo shard: .txt and .jsonl inputs to multi-frame .jsonl.zst shards (the
 * writer is the library's, loader/shards/writer.c). */
#include <stdlib.h>

#include "cli.h"

static const char shard_help[] =
    "usage: ordo shard --out DIR [--docs-per-frame N] [--docs-per-shard M]\n"
    "                  [--text-field NAME] INPUT...\n\n"
    "Reads .txt files (one document each), .jsonl, .jsonl.gz and .json.gz files\n"
    "(one JSON object per line; every gzip member in turn) and .parquet files\n"
    "(each row an object of its columns, struct columns nested), from the files\n"
    "and folders given (folders recursively, in bytewise path order), and\n"
    "writes DIR/shard-00000.jsonl.zst, ... : each zstd frame holds N documents\n"
    "as JSON lines and is independently decodable, so every frame is a chunk\n"
    "the loader can read on its own. DIR must hold no shards. Every record must\n"
    "carry a string (or null) text field (empty and null ones are counted and\n"
    "left out); folders may hold no symbolic links or unreadable entries, and\n"
    "no file may be given twice. On any error no shard is left behind.\n\n"
    "  --out DIR             output folder (created if missing)\n"
    "  --text-field NAME     the records' text field, a name or dotted path\n"
    "                        (default \"text\")\n"
    "  --docs-per-frame N    documents per frame (default 64)\n"
    "  --docs-per-shard M    documents per shard file (default 65536)\n"
    "  --level L             zstd level (default 3)\n"
    "  -h, --help            this help\n";

typedef struct {
    ordo_shard_options o;
} shard_args;

static int parse_long(const char *text, long max, long *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < 1 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* --docs-per-frame, --docs-per-shard, --level. */
static int count_value(int key, const char *value, void *context)
{
    shard_args *a = context;
    long level = a->o.level;
    int bad = key == 'f'   ? parse_long(value, 1 << 24, &a->o.docs_per_frame)
              : key == 's' ? parse_long(value, 1L << 40, &a->o.docs_per_shard)
                           : parse_long(value, 19, &level);
    a->o.level = (int)level;
    if (bad)
        return cli_usage_error("shard", "bad value '%s' (a positive whole number in range)", value);
    return 0;
}

/* Entry point of `ordo shard`. */
int cmd_shard(int argc, char **argv)
{
    shard_args a = {
        {.docs_per_frame = 64, .docs_per_shard = 65536, .level = 3, .text_field = "text"}};
    const cli_option options[] = {
        {"out", 1, .text = &a.o.out_dir},           {"docs-per-frame", 1, .key = 'f'},
        {"docs-per-shard", 1, .key = 's'},          {"level", 1, .key = 'l'},
        {"text-field", 1, .text = &a.o.text_field}, {0}};
    const cli_parser parser = {.command = "shard",
                               .help = shard_help,
                               .options = options,
                               .handle = count_value,
                               .context = &a};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (!a.o.out_dir || first >= argc)
        return cli_usage_error("shard", "needs --out DIR and at least one INPUT");
    ordo_shard_summary done;
    ordo_error err;
    if (ordo_shard_write(&a.o, (const char *const *)argv + first, (size_t)(argc - first), &done,
                         &err) != ORDO_OK)
        return fprintf(stderr, "ordo shard: %s\n", err.message), EXIT_FAILURE_;
    printf("%zu files, %ld documents (%ld empty skipped) -> %ld shards, %ld frames in %s\n",
           done.files, done.docs, done.skipped, done.shards, done.frames, a.o.out_dir);
    return EXIT_OK;
}
