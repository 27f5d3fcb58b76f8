/* ordo serve: its options; the service itself is server/ (server_run). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/server_run.h"
#include "cli.h"

static const char serve_help[] =
    "usage: ordo serve [--db PATH] [--listen HOST:PORT] [--threads N] [--public-read]\n"
    "                  [--tls-cert FILE --tls-key FILE] [--header-deadline S] [--insecure]\n\n"
    "Serves the ledger over HTTP (docs/api.md): training jobs report steps and\n"
    "checkpoints, fetch recovery manifests; compare, audit and the dashboard\n"
    "read. Port 0 picks a free port; the address bound is printed on stdout.\n"
    "Writes need a writer token (ordo token create); reads are open on a\n"
    "loopback address or with --public-read, else need a token. SIGTERM or\n"
    "SIGINT lets requests in flight finish, then closes the ledger.\n\n"
    "  --db PATH          the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  --listen HOST:PORT address to bind (default 127.0.0.1:8765; IPv4)\n"
    "  --threads N        worker threads, each with its own connection (default 4)\n"
    "  --public-read      reads need no token on a non-loopback address\n"
    "  --tls-cert FILE    serve HTTPS with this PEM certificate (chain)\n"
    "  --tls-key FILE     and this PEM private key\n"
    "  --header-deadline S seconds a connection has to send a request's headers,\n"
    "                     however slowly it trickles them (default 10)\n"
    "  --insecure         accept tokens over plain HTTP on a non-loopback address\n"
    "                     (refused otherwise: they would cross the network in clear)\n"
    "  -h, --help         this help\n";

static int parse_listen(const char *text, struct sockaddr_in *addr)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof host || colon == text)
        return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535)
        return -1;
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    return inet_pton(AF_INET, host, &addr->sin_addr) == 1 ? 0 : -1;
}

static int parse_seconds(const char *text, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= 0.1 && v <= 300))
        return -1;
    *out = v;
    return 0;
}

/* Reads a PEM file (at most 1 MiB) into a NUL-terminated string. */
static int load_pem(const char *what, const char *path, const char **out)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc((1 << 20) + 1) : NULL;
    size_t n = text ? fread(text, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    if (text)
        text[n] = '\0';
    if (!text || n == 0 || n == (1 << 20) || !strstr(text, "-----BEGIN ")) {
        free(text);
        fprintf(stderr, "ordo serve: %s '%s' is missing, empty, too large or not PEM\n", what,
                path);
        return -1;
    }
    *out = text;
    return 0;
}

/* Entry point of `ordo serve`. */
int cmd_serve(int argc, char **argv)
{
    const char *db = NULL, *listen = "127.0.0.1:8765", *cert_file = NULL, *key_file = NULL,
               *deadline = NULL, *threads = NULL;
    server_config config = {.threads = 4, .header_deadline = 10};
    const cli_option options[] = {{"db", 1, .text = &db},
                                  {"listen", 1, .text = &listen},
                                  {"threads", 1, .text = &threads},
                                  {"public-read", 0, .flag = &config.public_read},
                                  {"tls-cert", 1, .text = &cert_file},
                                  {"tls-key", 1, .text = &key_file},
                                  {"insecure", 0, .flag = &config.insecure},
                                  {"header-deadline", 1, .text = &deadline},
                                  {0}};
    const cli_parser parser = {.command = "serve", .help = serve_help, .options = options};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (first != argc)
        return cli_usage_error("serve", "unexpected argument '%s'", argv[first]);
    if (threads)
        config.threads = atoi(threads);
    if (parse_listen(listen, &config.address) != 0)
        return cli_usage_error("serve", "--listen '%s' must be IPV4-ADDRESS:PORT", listen);
    if (config.threads < 1 || config.threads > 256)
        return cli_usage_error("serve", "--threads must be 1 to 256");
    if (deadline && parse_seconds(deadline, &config.header_deadline) != 0)
        return cli_usage_error("serve", "--header-deadline '%s' must be 0.1 to 300 seconds",
                               deadline);
    if (!cert_file != !key_file)
        return cli_usage_error("serve", "--tls-cert and --tls-key go together");
    if (cert_file && load_pem("certificate", cert_file, &config.tls_cert) != 0)
        return EXIT_FAILURE_;
    if (key_file && load_pem("private key", key_file, &config.tls_key) != 0)
        return EXIT_FAILURE_;
    config.db = cli_db_path(db);
    config.listen = listen;
    return server_run(&config) == 0 ? EXIT_OK : EXIT_FAILURE_;
}
