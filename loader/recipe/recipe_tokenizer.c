/* A recipe's "tokenizer" (docs/recipe.md, "Tokenizer"): bytes, a tiktoken
 * encoding with its rank file, or a Hugging Face tokenizer.json; its bos
 * and eos, checked against the tokenizer when the recipe is opened; and
 * its canonical form, which pins the file by SHA-256 and holds the policy. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "recipe.h"

static const char *const tiktoken_keys[] = {"kind", "encoding", "path", "sha256",
                                            "bos",  "eos",      NULL};
static const char *const huggingface_keys[] = {"kind", "path", "sha256", "bos", "eos", NULL};

static ordo_status nomem(ordo_error *err)
{
    return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
}

static ordo_status check_keys(json_t *tokenizer, const char *kind, const char *const *allowed,
                              const char *list, ordo_error *err)
{
    const char *key;
    json_t *value;
    json_object_foreach(tokenizer, key, value)
    {
        int known = 0;
        for (size_t i = 0; allowed[i] && !known; i++)
            known = strcmp(key, allowed[i]) == 0;
        if (!known)
            return ordo__error(err, ORDO_INVALID,
                               "recipe: unknown key '%s' in tokenizer (a %s tokenizer takes %s)",
                               key, kind, list);
    }
    return ORDO_OK;
}

/* What a tokenizer's file is called in messages: it is not a shard. */
typedef struct file_kind {
    const char *what; /* "tokenizer rank file" */
    const char *is;   /* "the .tiktoken file" */
} file_kind;

static const file_kind rank_file = {"tokenizer rank file", "the .tiktoken file"};
static const file_kind json_file = {"tokenizer.json", "the Hugging Face tokenizer file"};

/* The file the tokenizer's "path" names: one that opens, a regular file. */
static ordo_status file_readable(const char *path, const file_kind *kind, ordo_error *err)
{
    char text[ORDO__ERRNO_TEXT_SIZE];
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ordo__error(err, ORDO_IO,
                           "recipe: cannot open the %s '%s' (%s its tokenizer 'path' names): %s",
                           kind->what, path, kind->is, ordo__errno_text(errno, text));
    int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    fclose(f);
    if (!regular)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: the %s '%s' (%s its tokenizer 'path' names) is not a file",
                           kind->what, path, kind->is);
    return ORDO_OK;
}

/* Reads "path" and "sha256", hashes the file and checks it is the one the
 * recipe names; *full is the caller's. */
static ordo_status pin_file(ordo_recipe *r, json_t *tokenizer, const file_kind *kind, char **full,
                            ordo_error *err)
{
    json_t *path = json_object_get(tokenizer, "path");
    json_t *sha = json_object_get(tokenizer, "sha256");
    *full = NULL;
    if (!json_is_string(path) || json_string_length(path) == 0)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: tokenizer 'path' (%s) must be a non-empty string", kind->is);
    if (sha && !json_is_string(sha))
        return ordo__error(
            err, ORDO_INVALID,
            "recipe: tokenizer 'sha256' must be a string (the SHA-256 of %s, in hex)", kind->is);
    if (!(r->tokenizer_path = ordo__strdup(json_string_value(path))))
        return nomem(err);
    ordo__shard probe = {.path = r->tokenizer_path};
    if (!(*full = ordo__shard_path(r, &probe)))
        return nomem(err);
    uint64_t size = 0;
    ordo_status status = file_readable(*full, kind, err);
    if (status == ORDO_OK)
        status = ordo__sha256_file(*full, r->tokenizer_sha256, &size, err);
    unsigned char recorded[ORDO_DIGEST_SIZE];
    ordo_error hex_err;
    if (status == ORDO_OK && sha &&
        (ordo_digest_from_hex(json_string_value(sha), recorded, &hex_err) != ORDO_OK ||
         memcmp(recorded, r->tokenizer_sha256, ORDO_DIGEST_SIZE) != 0))
        status =
            ordo__error(err, ORDO_CONFLICT, "%s '%s' is not the one the recipe names (SHA-256 %s)",
                        kind->what, *full, json_string_value(sha));
    return status;
}

/* "bos" or "eos": absent (or null for bos) leaves *out NULL; else a
 * non-empty string, copied. */
static ordo_status special_name(json_t *tokenizer, const char *key, int nullable, char **out,
                                ordo_error *err)
{
    json_t *value = json_object_get(tokenizer, key);
    *out = NULL;
    if (!value || (nullable && json_is_null(value)))
        return ORDO_OK;
    if (!json_is_string(value) || json_string_length(value) == 0)
        return ordo__error(err, ORDO_INVALID, "recipe: tokenizer '%s' must be %s", key,
                           nullable ? "a token's text (a non-empty string) or null"
                                    : "a token's text (a non-empty string)");
    return (*out = ordo__strdup(json_string_value(value))) ? ORDO_OK : nomem(err);
}

/* The id of the recipe's bos or eos, refused naming the tokenizer when it
 * has no such token. */
static ordo_status special_id(const ordo_recipe *r, const char *key, const char *name, uint32_t *id,
                              ordo_error *err)
{
    ordo_error lookup;
    if (ordo_tokenizer_token_id(r->tokenizer, name, id, &lookup) == ORDO_OK)
        return ORDO_OK;
    const ordo__encoding *e = ordo__tokenizer_encoding(r->tokenizer);
    if (!e)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: tokenizer %s '%s' is not a token of tokenizer.json '%s'", key,
                           name, r->tokenizer_path);
    char names[512];
    ordo__encoding_specials(e, names, sizeof names);
    return ordo__error(err, ORDO_INVALID,
                       "recipe: tokenizer %s '%s' is not a special token of %s (its special "
                       "tokens: %s)",
                       key, name, e->name, names);
}

/* bos and eos as written, read before the file is opened. */
static ordo_status policy_names(ordo_recipe *r, json_t *tokenizer, ordo_error *err)
{
    ordo_status status = special_name(tokenizer, "bos", 1, &r->bos, err);
    if (status == ORDO_OK)
        status = special_name(tokenizer, "eos", 0, &r->eos, err);
    if (status == ORDO_OK && !r->eos && r->tokenizer_kind == ORDO_TOKENIZER_HUGGINGFACE)
        status = ordo__error(
            err, ORDO_INVALID,
            "recipe: a huggingface tokenizer needs 'eos', the token appended after every "
            "document (e.g. \"eos\": \"<|end_of_text|>\"): no default is safe, as a "
            "tokenizer.json's configs name chat terminators such as <|im_end|> or <|eot_id|>, "
            "not the pretraining end-of-text");
    return status;
}

/* The ids of bos and eos, once the tokenizer is open. A tiktoken
 * encoding's eos defaults to its end-of-text, and naming that one is the
 * same policy (kept out of the canonical form: the recipe id is the one
 * without it). */
static ordo_status policy_ids(ordo_recipe *r, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    r->bos_id = ORDO__NO_TOKEN;
    if (r->bos && (status = special_id(r, "bos", r->bos, &r->bos_id, err)) != ORDO_OK)
        return status;
    const ordo__encoding *e = ordo__tokenizer_encoding(r->tokenizer);
    if (!r->eos) {
        r->eos_id = e->eot;
        return ORDO_OK;
    }
    if ((status = special_id(r, "eos", r->eos, &r->eos_id, err)) != ORDO_OK)
        return status;
    if (e && strcmp(r->eos, ordo__encoding_eot_name(e)) == 0) {
        free(r->eos);
        r->eos = NULL;
    }
    return ORDO_OK;
}

static ordo_status open_tiktoken(ordo_recipe *r, json_t *tokenizer, ordo_error *err)
{
    const char *name = json_string_value(json_object_get(tokenizer, "encoding"));
    const ordo__encoding *encoding = ordo__encoding_find(name);
    char names[256];
    ordo_tokenizer_encodings(names, sizeof names);
    if (!encoding)
        return ordo__error(err, ORDO_INVALID, "recipe: tokenizer encoding '%s' must be %s",
                           name ? name : "", names);
    char *full = NULL;
    ordo_status status = pin_file(r, tokenizer, &rank_file, &full, err);
    if (status == ORDO_OK)
        status = ordo__tokenizer_open_shared(encoding->name, full, r->tokenizer_sha256,
                                             &r->tokenizer, err);
    free(full);
    return status;
}

static ordo_status open_huggingface(ordo_recipe *r, json_t *tokenizer, ordo_error *err)
{
    char *full = NULL;
    ordo_status status = pin_file(r, tokenizer, &json_file, &full, err);
    if (status == ORDO_OK)
        status = ordo__tokenizer_open_shared(NULL, full, r->tokenizer_sha256, &r->tokenizer, err);
    free(full);
    return status;
}

static ordo_status parse_tiktoken(ordo_recipe *r, json_t *tokenizer, ordo_error *err)
{
    r->tokenizer_kind = ORDO_TOKENIZER_TIKTOKEN;
    ordo_status status = check_keys(tokenizer, "tiktoken", tiktoken_keys,
                                    "kind, encoding, path, sha256, bos and eos", err);
    if (status == ORDO_OK)
        status = policy_names(r, tokenizer, err);
    return status == ORDO_OK ? open_tiktoken(r, tokenizer, err) : status;
}

/* An "encoding" is refused first, saying why: a tokenizer.json names no
 * encoding. */
static ordo_status parse_huggingface(ordo_recipe *r, json_t *tokenizer, ordo_error *err)
{
    r->tokenizer_kind = ORDO_TOKENIZER_HUGGINGFACE;
    if (json_object_get(tokenizer, "encoding"))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: a huggingface tokenizer takes no 'encoding': its "
                           "tokenizer.json ('path') is the whole tokenizer");
    ordo_status status = check_keys(tokenizer, "huggingface", huggingface_keys,
                                    "kind, path, sha256, bos and eos", err);
    if (status == ORDO_OK)
        status = policy_names(r, tokenizer, err);
    return status == ORDO_OK ? open_huggingface(r, tokenizer, err) : status;
}

/* Reads the recipe's "tokenizer" into r (the bytes tokenizer without one);
 * see recipe.h. */
ordo_status ordo__tokenizer_parse(json_t *root, ordo_recipe *r, ordo_error *err)
{
    json_t *tokenizer = json_object_get(root, "tokenizer");
    r->tokenizer_kind = ORDO_TOKENIZER_BYTES;
    r->bos_id = ORDO__NO_TOKEN;
    r->eos_id = ORDO_BYTES_EOT;
    if (!tokenizer)
        return ORDO_OK;
    if (!json_is_object(tokenizer))
        return ordo__error(err, ORDO_INVALID, "recipe: 'tokenizer' must be an object");
    const char *kind = json_string_value(json_object_get(tokenizer, "kind"));
    if (!kind)
        return ordo__error(err, ORDO_INVALID, "recipe: tokenizer 'kind' must be a string");
    if (strcmp(kind, "bytes") == 0)
        return json_object_size(tokenizer) == 1
                   ? ORDO_OK
                   : ordo__error(err, ORDO_INVALID,
                                 "recipe: the bytes tokenizer takes no settings besides 'kind'");
    ordo_status status;
    if (strcmp(kind, "tiktoken") == 0)
        status = parse_tiktoken(r, tokenizer, err);
    else if (strcmp(kind, "huggingface") == 0)
        status = parse_huggingface(r, tokenizer, err);
    else
        return ordo__error(err, ORDO_INVALID,
                           "recipe: tokenizer kind '%s' is not supported "
                           "(supported: bytes, tiktoken, huggingface)",
                           kind);
    return status == ORDO_OK ? policy_ids(r, err) : status;
}

/* The canonical "tokenizer" (a new reference): a tiktoken one without bos
 * and with its encoding's own eos is written as it always was. */
json_t *ordo__tokenizer_canonical(const ordo_recipe *r)
{
    if (r->tokenizer_kind == ORDO_TOKENIZER_BYTES)
        return json_pack("{s:s}", "kind", "bytes");
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(r->tokenizer_sha256, hex);
    const ordo__encoding *e = ordo__tokenizer_encoding(r->tokenizer);
    json_t *out = e ? json_pack("{s:s, s:s, s:s, s:s}", "kind", "tiktoken", "encoding", e->name,
                                "path", r->tokenizer_path, "sha256", hex)
                    : json_pack("{s:s, s:s, s:s}", "kind", "huggingface", "path", r->tokenizer_path,
                                "sha256", hex);
    if (out && r->bos && json_object_set_new(out, "bos", json_string(r->bos)) != 0)
        json_decref(out), out = NULL;
    if (out && r->eos && json_object_set_new(out, "eos", json_string(r->eos)) != 0)
        json_decref(out), out = NULL;
    return out;
}

/* Frees what ordo__tokenizer_parse put in r. */
void ordo__tokenizer_release(ordo_recipe *r)
{
    ordo_tokenizer_close(r->tokenizer);
    free(r->tokenizer_path);
    free(r->bos);
    free(r->eos);
    r->tokenizer = NULL;
    r->tokenizer_path = r->bos = r->eos = NULL;
}
