/* Output helpers for the CLI: colour only on a terminal (and never when NO_COLOR is set),
 * uniform error messages, and the emitter (common/fdt_emit.h: tables, CSV, JSON) set up for
 * fdtune's documents and written to stdout. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_target.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The process's output state (cli_output_begin): --json given, the status so far, whether
 * anything went to stdout through the emitter, the first error printed, the errno of the
 * first failed write to stdout (-1: one whose reason is lost) and whether it was said. */
static struct {
    int json, status, written, export_failed, stdout_errno, stdout_said;
    char first_error[1024];
    const char *export_path[2]; /* --export-json, --export-csv */
    fdt_emit tee[2];
    fdt_sb tee_out[2];
} out_state;

static void keep_error(const char *fmt, va_list ap)
{
    if (!out_state.first_error[0])
        vsnprintf(out_state.first_error, sizeof out_state.first_error, fmt, ap);
}

int use_color(FILE *f)
{
    const char *nc = getenv("NO_COLOR");
    return (!nc || !*nc) && isatty(fileno(f));
}

const char *col(FILE *f, const char *code) { return use_color(f) ? code : ""; }

void print_error(const char *fmt, ...)
{
    fprintf(stderr, "%sfdtune: error:%s ", col(stderr, "\033[1;31m"), col(stderr, "\033[0m"));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    va_start(ap, fmt);
    keep_error(fmt, ap);
    va_end(ap);
}

void print_note(const char *fmt, ...)
{
    fprintf(stderr, "%sfdtune:%s ", col(stderr, "\033[1m"), col(stderr, "\033[0m"));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void die_usage(const char *cmd, const char *fmt, ...)
{
    fprintf(stderr, "%sfdtune %s: error:%s ", col(stderr, "\033[1;31m"), cmd,
            col(stderr, "\033[0m"));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    keep_error(fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'fdtune %s --help')\n", cmd);
    cli_output_status(EXIT_USAGE);
    exit(EXIT_USAGE);
}

int terminal_width(void)
{
    if (!isatty(STDOUT_FILENO))
        return 0;
    const char *c = getenv("COLUMNS");
    char *end;
    long v = c && *c ? strtol(c, &end, 10) : 0;
    if (v > 0 && !*end)
        return v < 10000 ? (int)v : 10000;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

static void emit_setup(fdt_emit *m, fdt_emit_mode mode, fdt_sb *b)
{
    fdt_sb_init(b);
    fdt_emit_init(m, mode, b);
    m->digits = FDT_EMIT_DIGITS_V1;
}

void emit_init(fdt_emit *m, fdt_emit_mode mode, fdt_sb *b)
{
    emit_setup(m, mode, b);
    m->head_on = col(stdout, "\033[1m");
    m->head_off = col(stdout, "\033[0m");
    m->width = terminal_width();
    /* --export-json / --export-csv: the same rendering into the files' forms (one at a
     * time: the error document, written when nothing else was, never has them) */
    fdt_emit **link = &m->tee;
    for (int k = 0; k < 2; k++)
        if (out_state.export_path[k] && !out_state.tee[k].out) {
            emit_setup(&out_state.tee[k], k ? FDT_EMIT_CSV : FDT_EMIT_JSON, &out_state.tee_out[k]);
            *link = &out_state.tee[k];
            link = &out_state.tee[k].tee;
        }
}

int export_option(int opt, const char *arg)
{
    if (opt != OPT_EXPORT_JSON && opt != OPT_EXPORT_CSV)
        return 0;
    out_state.export_path[opt == OPT_EXPORT_CSV] = arg;
    return 1;
}

/* emit_done's part for the files of --export-json and --export-csv: each tee of m finished
 * and written by the output rule (fdt_write_file_atomic; /dev/stdout after what stdout got,
 * which emit_flush flushed); -1 (printed, and the exit status will be EXIT_ERROR) when one
 * could not be. */
static int export_done(fdt_emit *m)
{
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        fdt_emit *t = &out_state.tee[k];
        if (!t->out)
            continue;
        fdt_err e;
        if (fdt_emit_finish(t, &e) == 0 &&
            fdt_write_file_atomic(out_state.export_path[k], fdt_sb_str(t->out), t->out->len,
                                  &e) == 0)
            ;
        else {
            print_error("--export-%s: %s", k ? "csv" : "json", e.msg);
            out_state.export_failed = 1;
            rc = -1;
        }
        fdt_emit_free(t);
        fdt_sb_free(t->out);
        memset(t, 0, sizeof *t);
    }
    m->tee = NULL;
    return rc;
}

void emit_doc_begin(fdt_emit *m)
{
    fdt_emit_object(m, NULL);
    fdt_emit_int(m, "schema", FDT_JSON_SCHEMA_VERSION);
}

/* Remembers why stdout failed, at the failure (later calls, isatty's ioctl among them,
 * change errno). */
static void stdout_failed(int err)
{
    if (!out_state.stdout_errno)
        out_state.stdout_errno = err > 0 ? err : -1;
}

int stdout_flush(void)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        stdout_failed(errno);
    if (!out_state.stdout_errno)
        return 0;
    if (!out_state.stdout_said) {
        out_state.stdout_said = 1;
        print_error("write standard output: %s", out_state.stdout_errno > 0
                                                     ? strerror(out_state.stdout_errno)
                                                     : "write error");
    }
    return -1;
}

int stdout_write(const char *s, size_t n)
{
    errno = 0;
    if (fwrite(s, 1, n, stdout) != n || fflush(stdout) != 0)
        stdout_failed(errno);
    return stdout_flush();
}

int emit_flush(fdt_emit *m)
{
    int oom = fdt_emit_oom(m), rc = 0;
    if (oom) {
        print_error("writing the output: out of memory");
        rc = -1;
    } else if (m->out->len) {
        out_state.written = 1;
        rc = stdout_write(fdt_sb_str(m->out), m->out->len);
    }
    fdt_sb_free(m->out);
    m->oom = 0;
    return rc;
}

int emit_done(fdt_emit *m)
{
    int rc = emit_flush(m);
    if (m->tee && export_done(m))
        rc = -1;
    fdt_err e;
    if (fdt_emit_finish(m, &e))
        rc = -1; /* emit_flush said so */
    fdt_emit_free(m);
    return rc;
}

/* The buffer of help_stream under --json. */
static struct {
    char *text;
    size_t len;
} help_buf;

FILE *help_stream(void)
{
    if (!out_state.json)
        return stdout;
    return open_memstream(&help_buf.text, &help_buf.len);
}

int help_done(const char *command, FILE *f)
{
    if (f == stdout)
        return EXIT_OK;
    if (!f || fclose(f) != 0) {
        free(help_buf.text);
        print_error("help: out of memory");
        return EXIT_ERROR;
    }
    fdt_sb b;
    fdt_emit m;
    emit_setup(&m, FDT_EMIT_JSON, &b); /* no --export-* tee: help writes no file */
    emit_doc_begin(&m);
    fdt_emit_object(&m, "help");
    fdt_emit_str_opt(&m, "command", command);
    fdt_emit_str(&m, "text", help_buf.text);
    fdt_emit_end(&m);
    fdt_emit_end(&m);
    free(help_buf.text);
    help_buf.text = NULL;
    return emit_done(&m) ? EXIT_ERROR : EXIT_OK;
}

int print_help(const char *command, void (*usage)(FILE *f))
{
    FILE *f = help_stream();
    if (f)
        usage(f);
    return help_done(command, f);
}

void emit_problem(fdt_emit *m, const fdt_problem *p)
{
    fdt_problem_emit(m, p);
}

void emit_problem_cells(fdt_emit *m, const fdt_problem *p)
{
    char buf[160];
    fdt_problem_format(p, buf, sizeof buf);
    fdt_emit_cell_str(m, buf);
    fdt_emit_cell_str(m, fdt_op_name(p->op));
    fdt_emit_cell_int(m, p->R);
    fdt_emit_cell_str(m, fdt_prec_name(p->prec));
    fdt_emit_cell_int(m, p->nx);
    fdt_emit_cell_int(m, p->ny);
    fdt_emit_cell_int(m, p->nz);
    int layer = p->op == FDT_OP_DWAVE;
    fdt_emit_cell_int(m, layer ? p->absorb_w : -1);
    fdt_emit_cell_real(m, layer ? p->absorb_s : NAN);
}

void config_display(const char *key, const fdt_device *dev, char *buf, size_t n)
{
    fdt_target t;
    fdt_config c;
    fdt_err e;
    if (dev && fdt_target_resolve(dev, &t, &e) == 0 && fdt_config_parse(key, &c, &e) == 0)
        fdt_config_display_for(&t.gen, &c, buf, n);
    else
        fdt_config_display_key(key, buf, n);
}

void emit_config_cells(fdt_emit *m, const char *key, const fdt_device *dev)
{
    char full[FDT_CONFIG_DISPLAY_MAX];
    config_display(key, dev, full, sizeof full);
    fdt_emit_cell_str(m, full);
    fdt_emit_cell_str(m, key);
    fdt_emit_cell_str(m, *key ? full : "");
}

void emit_env(fdt_emit *m, const char *key, const struct fdt_db_env *v)
{
    fdt_emit_object(m, key);
    fdt_emit_str(m, "driver", v->driver);
    fdt_emit_str(m, "runtime", v->runtime);
    fdt_emit_str(m, "compiler", v->compiler);
    fdt_emit_str(m, "fdtune_version", v->fdtune_version);
    fdt_emit_str(m, "generator", v->generator);
    fdt_emit_end(m);
}


void command_line(fdt_sb *b, const char *cmd, int argc, char **argv)
{
    fdt_sb_init(b);
    fdt_sb_printf(b, "fdtune %s", cmd);
    for (int i = 1; i < argc; i++)
        fdt_sb_printf(b, strpbrk(argv[i], " \t'\"") ? " '%s'" : " %s", argv[i]);
}

void print_exit_statuses(FILE *f)
{
    fprintf(f, "\nexit status: 0 success, 1 a check failed (a wrong kernel, a regression, nothing\n"
               "to export), 2 usage error, 3 no GPU visible, 4 operational error (device,\n"
               "compiler, database, disk, writing the output), 5 busy (another retune holds the\n"
               "database's retune lock), 130 interrupted (Ctrl-C or SIGTERM; what was measured\n"
               "is kept).\n");
}

static int same_letter(char a, char b)
{
    return tolower((unsigned char)a) == tolower((unsigned char)b);
}

/* The edit distance of a and b, ignoring case, an adjacent transposition counting one
 * ("--gird" is one from "--grid"); stops counting at 3. */
static int edit_distance(const char *a, const char *b)
{
    enum { MAX = 64 };
    size_t n = strlen(a), m = strlen(b);
    if (n >= MAX || m >= MAX)
        return 3;
    int d[MAX][MAX];
    for (size_t i = 0; i <= n; i++)
        for (size_t j = 0; j <= m; j++) {
            if (!i || !j) {
                d[i][j] = (int)(i + j);
                continue;
            }
            int v = d[i - 1][j - 1] + !same_letter(a[i - 1], b[j - 1]);
            v = d[i - 1][j] + 1 < v ? d[i - 1][j] + 1 : v;
            v = d[i][j - 1] + 1 < v ? d[i][j - 1] + 1 : v;
            if (i > 1 && j > 1 && same_letter(a[i - 1], b[j - 2]) &&
                same_letter(a[i - 2], b[j - 1]) && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m] < 3 ? d[n][m] : 3;
}

/* The long option of opts a mistyped name (without its dashes) most likely meant: the one
 * equal to it ignoring case (fuzzy 0), else with fuzzy 1 the nearest by edit distance, within
 * 1 for names of up to five letters and 2 beyond (none for one or two letters), the first in
 * the table on a tie. NULL: none. */
static const char *closest_option(const char *name, const struct option *opts, int fuzzy)
{
    size_t len = strlen(name);
    int limit = !fuzzy || len <= 2 ? 0 : len <= 5 ? 1 : 2, best = limit + 1;
    const char *pick = NULL;
    for (const struct option *o = opts; o && o->name; o++) {
        int d = strcasecmp(o->name, name) ? edit_distance(o->name, name) : -1;
        if (d < best && (fuzzy || d < 0)) {
            best = d;
            pick = o->name;
        }
    }
    return pick;
}

/* The long options name (without dashes) abbreviates, for an ambiguous abbreviation:
 * "--strategy, --seed" into b; how many. */
static int abbreviates(const char *name, const struct option *opts, fdt_sb *b)
{
    int n = 0;
    for (const struct option *o = opts; *name && o && o->name; o++)
        if (!strncmp(o->name, name, strlen(name)))
            fdt_sb_printf(b, "%s--%s", n++ ? ", " : "", o->name);
    return n;
}

/* The message for unknown option tok (shown as `shown`) into msg, with what it may have
 * meant: the same name in another case, else the options an ambiguous abbreviation
 * abbreviates, else an option a small edit away. */
static void unknown_option(fdt_sb *msg, const char *shown, const char *tok,
                           const struct option *opts)
{
    size_t dashes = strspn(tok, "-");
    fdt_sb typed, amb;
    fdt_sb_init(&typed);
    fdt_sb_init(&amb);
    fdt_sb_putn(&typed, tok + dashes, strcspn(tok + dashes, "="));
    const char *t = fdt_sb_str(&typed), *near = closest_option(t, opts, 0);
    if (!near && dashes == 2 && abbreviates(t, opts, &amb) > 1)
        fdt_sb_printf(msg, "option '%s' is ambiguous: %s", shown, fdt_sb_str(&amb));
    else if (near || (near = closest_option(t, opts, 1)))
        fdt_sb_printf(msg, "unknown option '%s'; did you mean '--%s'?", shown, near);
    else
        fdt_sb_printf(msg, "unknown option '%s'", shown);
    fdt_sb_free(&typed);
    fdt_sb_free(&amb);
}

int bad_option(const char *cmd, char **argv, const char *shortopts, const struct option *opts)
{
    const char *tok = optind > 0 ? argv[optind - 1] : "";
    const char *now = argv[optind]; /* argv ends with NULL */
    if (optopt && now && now[0] == '-' && now[1] != '-' && strchr(now + 1, optopt))
        tok = now; /* a cluster of short options ("-gpu") getopt has not left yet */
    char shortname[3] = {'-', (char)optopt, 0};
    fdt_sb name, msg;
    fdt_sb_init(&name);
    fdt_sb_init(&msg);
    if (strncmp(tok, "--", 2) && optopt)
        fdt_sb_puts(&name, shortname);
    else
        fdt_sb_putn(&name, tok, strcspn(tok, "="));
    const char *n = fdt_sb_str(&name);
    if (!strncmp(tok, "--", 2) && optopt)
        fdt_sb_printf(&msg, strchr(tok, '=') ? "option '%s' takes no value"
                                             : "option '%s' needs a value", n);
    else if (optopt && optopt != ':' && strchr(shortopts, optopt))
        fdt_sb_printf(&msg, "option '%s' needs a value", n);
    else
        unknown_option(&msg, n, tok, opts);
    fprintf(stderr, "%sfdtune %s:%s %s (see 'fdtune %s --help')\n", col(stderr, "\033[1;31m"),
            cmd, col(stderr, "\033[0m"), fdt_sb_str(&msg), cmd);
    if (!out_state.first_error[0])
        snprintf(out_state.first_error, sizeof out_state.first_error, "%s", fdt_sb_str(&msg));
    fdt_sb_free(&name);
    fdt_sb_free(&msg);
    return EXIT_USAGE;
}

/* The JSON error document of a failed --json command that printed nothing. */
static void error_document(void)
{
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, FDT_EMIT_JSON, &b);
    emit_doc_begin(&m);
    fdt_emit_object(&m, "error");
    fdt_emit_int(&m, "status", out_state.status);
    fdt_emit_str(&m, "message", out_state.first_error[0] ? out_state.first_error
                 : out_state.status == EXIT_NO_GPU ? "no GPU is visible" : "failed");
    fdt_emit_end(&m);
    fdt_emit_end(&m);
    emit_done(&m);
}

void cli_output_end(void)
{
    static int ended;
    if (ended)
        return;
    ended = 1;
    if (out_state.json && out_state.status != EXIT_OK && !out_state.written)
        error_document();
    int bad = stdout_flush() != 0;
    errno = 0;
    if (fclose(stdout) != 0 && !bad) {
        print_error("write standard output: %s", errno ? strerror(errno) : "write error");
        bad = 1;
    }
    if (bad)
        _exit(EXIT_ERROR);
}

void cli_output_begin(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--json"))
            out_state.json = 1;
    opterr = 0; /* bad_option says it, in one line */
    atexit(cli_output_end);
}

int cli_output_status(int status)
{
    if (out_state.export_failed && status == EXIT_OK)
        status = EXIT_ERROR;
    out_state.status = status;
    return status;
}
