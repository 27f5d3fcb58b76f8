/* Filters deciding records: every predicate and combinator, missing and
 * null fields, nested paths, exact numbers, NaN, type errors naming the
 * field and both types. */
#include <jansson.h>
#include <math.h>

#include "harness.h"
#include "testing.h"

static ordo__filter *compile(const char *text)
{
    json_error_t jerr;
    json_t *spec = json_loads(text, 0, &jerr);
    if (!spec)
        test_fail(__FILE__, __LINE__, "bad test JSON %s: %s", text, jerr.text);
    ordo__filter *filter = NULL;
    ordo_error err;
    ASSERT_OK(ordo__filter_compile(spec, "web", &filter, &err), &err);
    json_decref(spec);
    return filter;
}

typedef struct {
    const json_t *record;
    const ordo__filter *filter;
} record_fields;

static ordo_status record_field(void *context, uint32_t field, ordo__field_value *out,
                                ordo_error *err)
{
    (void)err;
    const record_fields *f = context;
    ordo__json_value(ordo__json_path(f->record, ordo__filter_field(f->filter, field)), out);
    return ORDO_OK;
}

/* 1: the record passes, 0: it does not, -1: an error (its message in
 * `message`, when given). */
static int decide(const char *filter_text, const char *record_text, size_t bytes, char *message)
{
    ordo__filter *filter = compile(filter_text);
    json_t *record = json_loads(record_text, 0, NULL);
    ASSERT(record != NULL);
    record_fields fields = {record, filter};
    ordo_error err;
    int pass = 7;
    ordo_status status = ordo__filter_eval(filter, bytes, record_field, &fields, &pass, &err);
    if (message)
        snprintf(message, ORDO_ERROR_MESSAGE_SIZE, "%s", status == ORDO_OK ? "" : err.message);
    json_decref(record);
    ordo__filter_free(filter);
    ASSERT(pass == 0 || pass == 1);
    return status == ORDO_OK ? pass : -1;
}

typedef struct {
    const char *filter, *record;
    int expect;
} filter_case;

static void check_cases(const filter_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char message[ORDO_ERROR_MESSAGE_SIZE];
        int got = decide(cases[i].filter, cases[i].record, 300, message);
        if (got != cases[i].expect)
            test_fail(__FILE__, __LINE__, "case %zu: filter %s on %s: %d, expected %d (%s)", i,
                      cases[i].filter, cases[i].record, got, cases[i].expect, message);
    }
}

#define CASES(array) check_cases(array, sizeof array / sizeof *array)

TEST(filter_every_predicate)
{
    static const filter_case cases[] = {
        {"{\"field\": \"n\", \"eq\": 3}", "{\"n\": 3}", 1},
        {"{\"field\": \"n\", \"eq\": 3}", "{\"n\": 3.0}", 1},
        {"{\"field\": \"n\", \"eq\": 3}", "{\"n\": 4}", 0},
        {"{\"field\": \"n\", \"ne\": 3}", "{\"n\": 4}", 1},
        {"{\"field\": \"n\", \"ne\": 3}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"lt\": 3}", "{\"n\": 2.5}", 1},
        {"{\"field\": \"n\", \"lt\": 3}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"le\": 3}", "{\"n\": 3}", 1},
        {"{\"field\": \"n\", \"le\": 3}", "{\"n\": 3.5}", 0},
        {"{\"field\": \"n\", \"gt\": 3}", "{\"n\": 3.5}", 1},
        {"{\"field\": \"n\", \"gt\": 3}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"ge\": 0.65}", "{\"n\": 0.65}", 1},
        {"{\"field\": \"n\", \"ge\": 0.65}", "{\"n\": 0.6499999}", 0},
        {"{\"field\": \"n\", \"ge\": -1}", "{\"n\": -1}", 1},
        {"{\"field\": \"s\", \"eq\": \"en\"}", "{\"s\": \"en\"}", 1},
        {"{\"field\": \"s\", \"eq\": \"en\"}", "{\"s\": \"EN\"}", 0},
        {"{\"field\": \"s\", \"eq\": \"en\"}", "{\"s\": \"en \"}", 0},
        {"{\"field\": \"s\", \"ne\": \"en\"}", "{\"s\": \"fr\"}", 1},
        {"{\"field\": \"s\", \"eq\": \"caf\\u00e9\"}", "{\"s\": \"caf\xc3\xa9\"}", 1},
        {"{\"field\": \"b\", \"eq\": true}", "{\"b\": true}", 1},
        {"{\"field\": \"b\", \"eq\": true}", "{\"b\": false}", 0},
        {"{\"field\": \"b\", \"ne\": true}", "{\"b\": false}", 1},
        {"{\"field\": \"s\", \"in\": [\"en\", \"de\"]}", "{\"s\": \"de\"}", 1},
        {"{\"field\": \"s\", \"in\": [\"en\", \"de\"]}", "{\"s\": \"fr\"}", 0},
        {"{\"field\": \"s\", \"not_in\": [\"en\", \"de\"]}", "{\"s\": \"fr\"}", 1},
        {"{\"field\": \"s\", \"not_in\": [\"en\", \"de\"]}", "{\"s\": \"en\"}", 0},
        {"{\"field\": \"n\", \"in\": [1, 2.5, 7]}", "{\"n\": 2.5}", 1},
        {"{\"field\": \"n\", \"in\": [1, 2.5, 7]}", "{\"n\": 7.0}", 1},
        {"{\"field\": \"n\", \"in\": [1, 2.5, 7]}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"not_in\": [1, 2.5, 7]}", "{\"n\": 3}", 1},
        {"{\"field\": \"b\", \"in\": [false]}", "{\"b\": false}", 1},
        {"{\"field\": \"x\", \"exists\": true}", "{\"x\": 0}", 1},
        {"{\"field\": \"x\", \"exists\": true}", "{\"x\": {}}", 1},
        {"{\"field\": \"x\", \"exists\": true}", "{\"y\": 0}", 0},
        {"{\"field\": \"x\", \"exists\": false}", "{\"y\": 0}", 1},
        {"{\"field\": \"x\", \"exists\": false}", "{\"x\": \"\"}", 0},
        {"{\"field\": \"$bytes\", \"ge\": 300}", "{}", 1},
        {"{\"field\": \"$bytes\", \"gt\": 300}", "{}", 0},
        {"{\"field\": \"$bytes\", \"in\": [299, 300.0]}", "{}", 1},
    };
    CASES(cases);
}

TEST(filter_every_combinator)
{
    static const filter_case cases[] = {
        {"{\"all\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 1, \"b\": 2}", 1},
        {"{\"all\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 1, \"b\": 3}", 0},
        {"{\"any\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 0, \"b\": 2}", 1},
        {"{\"any\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 0, \"b\": 0}", 0},
        {"{\"not\": {\"field\": \"a\", \"eq\": 1}}", "{\"a\": 1}", 0},
        {"{\"not\": {\"field\": \"a\", \"eq\": 1}}", "{\"a\": 2}", 1},
        {"{\"not\": {\"not\": {\"field\": \"a\", \"eq\": 1}}}", "{\"a\": 1}", 1},
        {"{\"all\": [{\"any\": [{\"field\": \"a\", \"eq\": 1}, {\"not\": {\"field\": \"b\", "
         "\"exists\": true}}]}, {\"field\": \"$bytes\", \"ge\": 200}]}",
         "{\"a\": 0}", 1},
        /* any stops at the first true, all at the first false: the
         * condition after it, a type error here, is not evaluated */
        {"{\"any\": [{\"field\": \"k\", \"eq\": \"s\"}, {\"field\": \"v\", \"gt\": 1}]}",
         "{\"k\": \"s\", \"v\": \"text\"}", 1},
        {"{\"all\": [{\"field\": \"k\", \"eq\": \"n\"}, {\"field\": \"v\", \"gt\": 1}]}",
         "{\"k\": \"s\", \"v\": \"text\"}", 0},
        {"{\"all\": [{\"field\": \"k\", \"eq\": \"s\"}, {\"field\": \"v\", \"gt\": 1}]}",
         "{\"k\": \"s\", \"v\": \"text\"}", -1},
    };
    CASES(cases);
}

TEST(filter_missing_and_null_fields_make_comparisons_false)
{
    static const char *const predicates[] = {
        "\"eq\": 1",    "\"ne\": 1",      "\"lt\": 1",          "\"le\": 1",
        "\"gt\": 1",    "\"ge\": 1",      "\"eq\": \"x\"",      "\"ne\": \"x\"",
        "\"ne\": true", "\"in\": [1, 2]", "\"not_in\": [1, 2]", "\"not_in\": [\"a\", \"b\"]"};
    static const char *const records[] = {"{}", "{\"f\": null}", "{\"other\": 1}"};
    for (size_t p = 0; p < sizeof predicates / sizeof *predicates; p++)
        for (size_t r = 0; r < 3; r++) {
            char filter[128], inverted[160];
            snprintf(filter, sizeof filter, "{\"field\": \"f\", %s}", predicates[p]);
            snprintf(inverted, sizeof inverted, "{\"not\": %s}", filter);
            if (decide(filter, records[r], 10, NULL) != 0 ||
                decide(inverted, records[r], 10, NULL) != 1)
                test_fail(__FILE__, __LINE__, "%s on %s should be false (and its not true)", filter,
                          records[r]);
        }
    ASSERT_EQ_INT(decide("{\"field\": \"f\", \"exists\": true}", "{\"f\": null}", 1, NULL), 0);
    ASSERT_EQ_INT(decide("{\"field\": \"f\", \"exists\": false}", "{\"f\": null}", 1, NULL), 1);
    /* a missing step of a path is a missing field, and so is a step that
     * is not an object */
    ASSERT_EQ_INT(decide("{\"field\": \"a.b\", \"ne\": 1}", "{\"a\": null}", 1, NULL), 0);
    ASSERT_EQ_INT(decide("{\"field\": \"a.b\", \"ne\": 1}", "{\"a\": 5}", 1, NULL), 0);
    ASSERT_EQ_INT(decide("{\"field\": \"a.b\", \"exists\": false}", "{\"a\": [1]}", 1, NULL), 1);
}

TEST(filter_nested_paths_and_names_with_spaces)
{
    static const filter_case cases[] = {
        {"{\"field\": \"meta.quality.score\", \"ge\": 0.5}",
         "{\"meta\": {\"quality\": {\"score\": 0.75}}}", 1},
        {"{\"field\": \"meta.quality.score\", \"ge\": 0.5}",
         "{\"meta\": {\"quality\": {\"score\": 0.25}}}", 0},
        {"{\"field\": \"meta.quality\", \"exists\": true}", "{\"meta\": {\"quality\": {}}}", 1},
        {"{\"field\": \"meta data.the score\", \"eq\": 2}", "{\"meta data\": {\"the score\": 2}}",
         1},
        {"{\"field\": \"caf\\u00e9.\\u03bb\", \"eq\": \"\\u00fc\"}",
         "{\"caf\\u00e9\": {\"\\u03bb\": \"\xc3\xbc\"}}", 1},
        /* dots always separate: a key holding a dot cannot be named */
        {"{\"field\": \"a.b\", \"exists\": true}", "{\"a.b\": 1}", 0},
        {"{\"field\": \"a.b\", \"eq\": 1}", "{\"a.b\": 2, \"a\": {\"b\": 1}}", 1},
        /* an object compared with anything is a type error, even nested */
        {"{\"field\": \"meta\", \"eq\": 1}", "{\"meta\": {\"quality\": 1}}", -1},
    };
    CASES(cases);
    ordo__filter *filter =
        compile("{\"all\": [{\"field\": \"b.c\", \"eq\": 1}, {\"field\": \"a\", \"eq\": 1}, "
                "{\"field\": \"$bytes\", \"ge\": 1}, {\"field\": \"b.c\", \"ne\": 2}]}");
    ASSERT_EQ_INT(ordo__filter_field_count(filter), 2); /* first use order, $bytes apart */
    ASSERT_EQ_STR(ordo__filter_field(filter, 0), "b.c");
    ASSERT_EQ_STR(ordo__filter_field(filter, 1), "a");
    ordo__filter_free(filter);
}

TEST(filter_numbers_compare_exactly)
{
    static const filter_case cases[] = {
        /* 2^53 + 1 is not a double: an INT64 field against a double
         * threshold is compared without rounding either */
        {"{\"field\": \"n\", \"gt\": 9007199254740992.0}", "{\"n\": 9007199254740993}", 1},
        {"{\"field\": \"n\", \"eq\": 9007199254740992.0}", "{\"n\": 9007199254740993}", 0},
        {"{\"field\": \"n\", \"ne\": 9007199254740992.0}", "{\"n\": 9007199254740993}", 1},
        {"{\"field\": \"n\", \"lt\": 9007199254740993}", "{\"n\": 9007199254740992.0}", 1},
        {"{\"field\": \"n\", \"eq\": 9007199254740993}", "{\"n\": 9007199254740992.0}", 0},
        {"{\"field\": \"n\", \"in\": [9007199254740993]}", "{\"n\": 9007199254740992}", 0},
        {"{\"field\": \"n\", \"in\": [9007199254740992.0, 1]}", "{\"n\": 9007199254740993}", 0},
        /* INT64 max against 2^63, the double next to it */
        {"{\"field\": \"n\", \"lt\": 9223372036854775807.0}", "{\"n\": 9223372036854775807}", 1},
        {"{\"field\": \"n\", \"gt\": -9223372036854775808.0}", "{\"n\": -9223372036854775807}", 1},
        {"{\"field\": \"n\", \"ge\": -9223372036854775808.0}", "{\"n\": -9223372036854775808}", 1},
        {"{\"field\": \"n\", \"gt\": 1e300}", "{\"n\": 9223372036854775807}", 0},
        {"{\"field\": \"n\", \"lt\": -2.5}", "{\"n\": -3}", 1},
        {"{\"field\": \"n\", \"lt\": -2.5}", "{\"n\": -2}", 0},
        {"{\"field\": \"n\", \"gt\": -2.5}", "{\"n\": -2}", 1},
        {"{\"field\": \"n\", \"eq\": 0}", "{\"n\": -0.0}", 1},
        {"{\"field\": \"n\", \"ge\": 2e2}", "{\"n\": 200}", 1},
    };
    CASES(cases);
}

TEST(filter_type_errors_name_field_and_types)
{
    static const struct {
        const char *filter, *record, *got, *want;
    } cases[] = {
        {"{\"field\": \"language_score\", \"ge\": 0.65}", "{\"language_score\": \"high\"}",
         "is a string", "with a number"},
        {"{\"field\": \"lang\", \"eq\": \"en\"}", "{\"lang\": 1}", "is a number", "with a string"},
        {"{\"field\": \"flag\", \"eq\": true}", "{\"flag\": 1}", "is a number", "with a boolean"},
        {"{\"field\": \"n\", \"lt\": 1}", "{\"n\": true}", "is a boolean", "with a number"},
        {"{\"field\": \"n\", \"in\": [1, 2]}", "{\"n\": \"1\"}", "is a string", "with a number"},
        {"{\"field\": \"n\", \"not_in\": [\"a\", \"b\"]}", "{\"n\": [1]}",
         "is an object or an array", "with a string"},
        {"{\"field\": \"m.x\", \"ne\": \"a\"}", "{\"m\": {\"x\": {\"y\": 1}}}",
         "is an object or an array", "with a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char message[ORDO_ERROR_MESSAGE_SIZE];
        ASSERT_EQ_INT(decide(cases[i].filter, cases[i].record, 1, message), -1);
        json_t *spec = json_loads(cases[i].filter, 0, NULL);
        char field[64];
        snprintf(field, sizeof field, "field '%s'",
                 json_string_value(json_object_get(spec, "field")));
        json_decref(spec);
        ASSERT_CONTAINS(message, field);
        ASSERT_CONTAINS(message, cases[i].got);
        ASSERT_CONTAINS(message, cases[i].want);
    }
}

static ordo_status nan_field(void *context, uint32_t field, ordo__field_value *out, ordo_error *err)
{
    (void)context, (void)field, (void)err;
    *out = (ordo__field_value){.kind = ORDO__VALUE_DOUBLE, .d = NAN};
    return ORDO_OK;
}

TEST(filter_nan_equals_nothing_and_is_ordered_with_nothing)
{
    static const struct {
        const char *filter;
        int expect;
    } cases[] = {
        {"{\"field\": \"x\", \"eq\": 1}", 0},
        {"{\"field\": \"x\", \"ne\": 1}", 1},
        {"{\"field\": \"x\", \"lt\": 1}", 0},
        {"{\"field\": \"x\", \"le\": 1.5}", 0},
        {"{\"field\": \"x\", \"gt\": 1}", 0},
        {"{\"field\": \"x\", \"ge\": -1e300}", 0},
        {"{\"field\": \"x\", \"in\": [1, 2.5]}", 0},
        {"{\"field\": \"x\", \"not_in\": [1, 2.5]}", 1},
        {"{\"field\": \"x\", \"exists\": true}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ordo__filter *filter = compile(cases[i].filter);
        ordo_error err;
        int pass = -1;
        ASSERT_OK(ordo__filter_eval(filter, 1, nan_field, NULL, &pass, &err), &err);
        if (pass != cases[i].expect)
            test_fail(__FILE__, __LINE__, "%s on NaN: %d", cases[i].filter, pass);
        ordo__filter_free(filter);
    }
}
