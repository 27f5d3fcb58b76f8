/* JSON views (ordo.h): the text the CLI and the service both print. */
#include "fixtures.h"

/* A step with every field, one metric name and value outside ASCII: the
 * view is compact, escapes non-ASCII characters and embeds the metrics as
 * JSON; an absent value is null. */
TEST(json_views_are_compact_ascii_and_embed_json)
{
    unsigned char lanes[2 * ORDO_DIGEST_SIZE] = {0};
    lanes[31] = 1;
    lanes[63] = 2;
    int64_t sources[1] = {97};
    ordo_step step;
    ordo_step_init(&step, 7);
    step.batch_digest[0] = 0xab;
    step.lane_digests = lanes;
    step.lane_count = 2;
    step.tokens = 100;
    step.source_tokens = sources;
    step.source_count = 1;
    step.has_loss = 1;
    step.loss = 0.5;
    step.metrics = "{\"n\xc3\xa4me\": \"\xe2\x98\x83\", \"lr\": 1}";
    char *text = ordo_step_json(&step);
    ASSERT(text != NULL);
    ASSERT_EQ_STR(text,
                  "{\"step\":7,\"batch_digest\":\"ab000000000000000000000000000000000000000000000"
                  "00000000000000000\",\"lane_digests\":[\"000000000000000000000000000000000000"
                  "0000000000000000000000000001\",\"00000000000000000000000000000000000000000000"
                  "00000000000000000002\"],\"tokens\":100,\"pad_tokens\":null,\"source_tokens\":"
                  "[97],\"loss\":0.5,\"metrics\":{\"n\\u00E4me\":\"\\u2603\",\"lr\":1}}");
    ordo_free(text);

    ordo_event event = {.id = 3,
                        .kind = ORDO_EVENT_RESUME,
                        .detail = "{\"from\": 2}",
                        .created_at = "2026-01-01T00:00:00.000Z"};
    text = ordo_event_json(&event);
    ASSERT_EQ_STR(text, "{\"id\":3,\"step\":null,\"kind\":\"resume\",\"detail\":{\"from\":2},"
                        "\"created_at\":\"2026-01-01T00:00:00.000Z\"}");
    ordo_free(text);

    ordo_checkpoint checkpoint = {
        .step = 4, .lanes = 2, .state_size = 9, .held = 1, .created_at = "t"};
    text = ordo_checkpoint_json(&checkpoint);
    ASSERT_EQ_STR(text, "{\"step\":4,\"lanes\":2,\"state_bytes\":9,\"created_at\":\"t\","
                        "\"held\":true}");
    ordo_free(text);
}

/* A string that is not UTF-8 cannot be rendered: NULL, not a broken text. */
TEST(json_view_of_a_name_that_is_not_utf8_is_null)
{
    ordo_run_info run = {
        .id = 1, .name = "bad\xff", .recipe_id = "r", .digest_kind = "ordo", .created_at = "t"};
    ASSERT(ordo_run_info_json(&run) == NULL);
    memcpy(run.name, "ok", 3);
    char *text = ordo_run_info_json(&run);
    ASSERT_EQ_STR(text, "{\"id\":1,\"name\":\"ok\",\"recipe_id\":\"r\",\"recipe_name\":null,"
                        "\"group\":null,\"baseline\":null,\"lanes\":0,\"world_size\":0,"
                        "\"digest_kind\":\"ordo\",\"segments\":0,\"steps\":0,\"first_step\":null,"
                        "\"last_step\":null,\"checkpoints\":0,\"conflicts\":0,\"lane_states\":0,"
                        "\"created_at\":\"t\"}");
    ordo_free(text);
}

/* Bindings check their copies of the public structs against these. */
TEST(struct_sizes_are_given_by_name)
{
    ASSERT_EQ_INT(ordo_struct_size("ordo_run_info"), sizeof(ordo_run_info));
    ASSERT_EQ_INT(ordo_struct_size("ordo_batch"), sizeof(ordo_batch));
    ASSERT_EQ_INT(ordo_struct_size("ordo_error"), sizeof(ordo_error));
    ASSERT_EQ_INT(ordo_struct_size("ordo_loader_options"), sizeof(ordo_loader_options));
    ASSERT_EQ_INT(ordo_struct_size("ordo_recipe_info"), sizeof(ordo_recipe_info));
    ASSERT_EQ_INT(ordo_struct_size("ordo_run"), 0);
    ASSERT_EQ_INT(ordo_struct_size(NULL), 0);
}
