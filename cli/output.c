/* Output helpers for the CLI: colour only on a terminal (and never when NO_COLOR is set),
 * uniform error messages, and the emitter (common/fdt_emit.h: tables, CSV, JSON) set up for
 * fdtune's documents and written to stdout. */
#include "cli.h"
#include "fdt_db.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    fprintf(stderr, "\n(see 'fdtune %s --help')\n", cmd);
    exit(EXIT_USAGE);
}

void emit_init(fdt_emit *m, fdt_emit_mode mode, fdt_sb *b)
{
    fdt_sb_init(b);
    fdt_emit_init(m, mode, b);
    m->digits = FDT_EMIT_DIGITS_V1;
    m->head_on = col(stdout, "\033[1m");
    m->head_off = col(stdout, "\033[0m");
}

void emit_doc_begin(fdt_emit *m)
{
    fdt_emit_object(m, NULL);
    fdt_emit_int(m, "schema", FDT_JSON_SCHEMA_VERSION);
}

int emit_flush(fdt_emit *m)
{
    int oom = fdt_emit_oom(m);
    if (oom)
        print_error("writing the output: out of memory");
    else
        fputs(fdt_sb_str(m->out), stdout);
    fdt_sb_free(m->out);
    m->oom = 0;
    return oom ? -1 : 0;
}

int emit_done(fdt_emit *m)
{
    int rc = emit_flush(m);
    fdt_err e;
    if (fdt_emit_finish(m, &e))
        rc = -1; /* emit_flush said so */
    fdt_emit_free(m);
    return rc;
}

void emit_problem(fdt_emit *m, const fdt_problem *p)
{
    fdt_problem_emit(m, p);
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
