/* ordo batch RUN --step N: what the model saw at a step, regenerated from
 * the ledger and checked against it (the library's ordo_batch_provenance). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char batch_help[] =
    "usage: ordo batch RUN --step N [--lane L] [--json] [--text] [--db PATH]\n"
    "                  [--data-root DIR]\n\n"
    "Regenerates the global batch of step N of RUN (recorded at any world size)\n"
    "from the lane state recorded for N's flush epoch (at most one epoch of\n"
    "replay), else from its latest checkpoint before N, checks every lane\n"
    "digest of every step replayed against the ledger, and lists each\n"
    "sample's documents: per piece, the shard (as in the resolved recipe),\n"
    "the record (its physical index in the shard from 0: blank, empty and\n"
    "filtered-out records count), the record's byte offset (.jsonl, .txt),\n"
    "the document tokens it holds (bos and eos included) and where in the\n"
    "sample it starts. A lane that\n"
    "does not reproduce the ledger's digest, or a changed shard, is an error\n"
    "naming the step and the lane: the data or the code changed.\n\n"
    "  --step N         the step (recorded by the run)\n"
    "  --lane L         only lane L's samples\n"
    "  --json           print one JSON object\n"
    "  --text           print each piece's text (decoded) under its provenance\n"
    "  --data-root DIR  where the recipe's relative shard paths resolve\n"
    "                   (default: the run's recorded folder)\n"
    "  --db PATH        the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  -h, --help       this help\n";

static int parse_number(const char *text, long long max, long long *value)
{
    char *end = NULL;
    errno = 0;
    long long v = text ? strtoll(text, &end, 10) : -1;
    if (!text || errno || end == text || *end || v < 0 || v > max)
        return -1;
    *value = v;
    return 0;
}

static void print_table(const char *run, const ordo_provenance *p, int lane)
{
    const char *from = strcmp(p->from, "epoch") == 0 ? "its flush epoch's lane state, after step "
                       : strcmp(p->from, "checkpoint") == 0 ? "the checkpoint at step "
                                                            : "step ";
    printf("step %lld of run '%s': %d samples of %d lanes, regenerated from %s%lld; every lane "
           "digest equals the ledger's\n",
           (long long)p->step, run, p->rows, p->lanes, from, (long long)p->from_step);
    printf("%5s %4s %-12s %5s %-13s %7s %8s %8s  %s\n", "LANE", "ROW", "SOURCE", "AT", "TOKENS",
           "LENGTH", "RECORD", "BYTE", "SHARD");
    for (int row = 0; row < p->rows; row++) {
        const ordo_batch_sample *s = &p->samples[row];
        if (lane >= 0 && s->lane != lane)
            continue;
        for (int i = 0; i < s->piece_count; i++) {
            const ordo_batch_piece *b = &s->pieces[i];
            char tokens[48], byte[24] = "-", length[24] = "-";
            snprintf(tokens, sizeof tokens, "%llu-%llu", (unsigned long long)b->start,
                     (unsigned long long)b->end);
            if (b->byte >= 0)
                snprintf(byte, sizeof byte, "%lld", (long long)b->byte);
            if (b->length) /* else the document goes on past the flush epoch */
                snprintf(length, sizeof length, "%llu", (unsigned long long)b->length);
            printf("%5d %4d %-12.12s %5d %-13s %7s %8llu %8s  %s\n", s->lane, row % p->per_lane,
                   s->source_name, b->at, tokens, length, (unsigned long long)b->record, byte,
                   b->shard);
        }
    }
}

static int print_text(const ordo_provenance *p, int lane)
{
    for (int row = 0; row < p->rows; row++) {
        const ordo_batch_sample *s = &p->samples[row];
        if (lane >= 0 && s->lane != lane)
            continue;
        for (int i = 0; i < s->piece_count; i++) {
            const ordo_batch_piece *b = &s->pieces[i];
            char *text = NULL;
            size_t len = 0;
            ordo_error err;
            if (ordo_provenance_piece_text(p, row, i, &text, &len, &err) != ORDO_OK)
                return cli_fail("batch", &err);
            char of[64] = " (it goes on past the flush epoch)";
            if (b->length)
                snprintf(of, sizeof of, " of %llu", (unsigned long long)b->length);
            printf("== lane %d row %d at %d: %s %s record %llu, tokens %llu-%llu%s\n", s->lane,
                   row % p->per_lane, b->at, s->source_name, b->shard,
                   (unsigned long long)b->record, (unsigned long long)b->start,
                   (unsigned long long)b->end, of);
            fwrite(text, 1, len, stdout);
            fputc('\n', stdout);
            ordo_free(text);
        }
    }
    return EXIT_OK;
}

/* Entry point of `ordo batch`. */
int cmd_batch(int argc, char **argv)
{
    const char *db = NULL, *step_text = NULL, *lane_text = NULL, *root = NULL;
    int json = 0, text = 0;
    const cli_option options[] = {{"db", 1, .text = &db},
                                  {"step", 1, .text = &step_text},
                                  {"lane", 1, .text = &lane_text},
                                  {"data-root", 1, .text = &root},
                                  {"json", 0, .flag = &json},
                                  {"text", 0, .flag = &text},
                                  {0}};
    const cli_parser parser = {.command = "batch", .help = batch_help, .options = options};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (first >= argc)
        return cli_usage_error("batch", "which run? (ordo batch RUN --step N)");
    if (first + 1 < argc)
        return cli_usage_error("batch", "unexpected argument '%s'", argv[first + 1]);
    long long step = 0, lane = -1;
    if (!step_text)
        return cli_usage_error("batch", "--step N is required");
    if (parse_number(step_text, ORDO_STEP_MAX, &step) || step < 1)
        return cli_usage_error("batch", "--step must be a step number from 1, not '%s'", step_text);
    if (lane_text && parse_number(lane_text, 1 << 30, &lane))
        return cli_usage_error("batch", "--lane must be a lane number from 0, not '%s'", lane_text);
    if (json && text)
        return cli_usage_error("batch", "--json and --text exclude each other");
    ordo_ledger *ledger = cli_open("batch", db, ORDO_OPEN_READONLY);
    if (!ledger)
        return EXIT_FAILURE_;
    ordo_run_info run;
    ordo_provenance *p = NULL;
    ordo_error err;
    if (ordo_run_get(ledger, argv[first], &run, &err) != ORDO_OK) {
        ordo_ledger_close(ledger);
        return cli_fail("batch", &err);
    }
    if (lane >= run.lanes) {
        ordo_ledger_close(ledger);
        return cli_usage_error("batch", "--lane %lld is not a lane of run '%s' (lanes 0 to %d)",
                               lane, run.name, run.lanes - 1);
    }
    ordo_status status = ordo_batch_provenance(ledger, run.id, step, root, &p, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("batch", &err);
    if (json)
        rc = cli_print_json(cli_view(ordo_provenance_json(run.name, p, (int)lane)));
    else if (text)
        rc = print_text(p, (int)lane);
    else
        print_table(run.name, p, (int)lane), rc = EXIT_OK;
    ordo_provenance_free(p);
    return rc;
}
