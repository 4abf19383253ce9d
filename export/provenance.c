/* The text of a header's comment block that both of its parts write: text made safe inside
 * a C block comment or as a C string literal, and the provenance lines (what exported it,
 * from which databases and runs, and where every tuned result was measured, or that fdtune's
 * model predicted it). header.c (the GPU part) and cpu.c (the CPU part) write through it;
 * it calls neither. */
#include "exp_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ text helpers */

/* Text that is safe inside a C block comment: no comment end, no control characters. */
static void comment_text(fdt_sb *b, const char *s)
{
    for (; *s; s++) {
        if (s[0] == '*' && s[1] == '/')
            fdt_sb_puts(b, "* ");
        else if ((unsigned char)*s < 0x20)
            fdt_sb_puts(b, " ");
        else
            fdt_sb_putn(b, s, 1);
    }
}

/* A C/C++ string literal ('?' escaped: trigraphs exist in strict C modes). */
static void c_str(fdt_sb *b, const char *s)
{
    fdt_sb_puts(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\' || ch == '?')
            fdt_sb_printf(b, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            fdt_sb_printf(b, "\\%03o", ch);
        else
            fdt_sb_putn(b, s, 1);
    }
    fdt_sb_puts(b, "\"");
}

void fdt_exp_comment_text(fdt_sb *b, const char *s) { comment_text(b, s); }

void fdt_exp_c_str(fdt_sb *b, const char *s) { c_str(b, s); }

/* ------------------------------------------------------------------ comment block */

/* A measured number with its unit, or "unknown" (the copy bandwidth of a run may be
 * missing, and with it the fraction of copy). */
static void measure(char *buf, size_t n, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "%s unknown", strchr(fmt, ' ') + 1);
}

/* The provenance of a result of fdtune's model (after "... on DEVICE"): what it is, and that
 * it is no measurement. */
static void predicted(fdt_sb *b, const fdt_exp_tuned *tu)
{
    const fdt_db_row *r = &tu->row;
    char ms[32], gbs[32], key[160], shown[FDT_CONFIG_DISPLAY_MAX];
    fdt_config_display_key(r->ev.config, shown, sizeof shown); /* every parameter */
    measure(ms, sizeof ms, "%.4f ms", r->ev.time_ms);
    measure(gbs, sizeof gbs, "%.0f GB/s", r->ev.gbs);
    fdt_problem_format(&r->problem, key, sizeof key);
    fdt_sb_printf(b, " (%s, %d CUs)\n *       config %s\n *       PREDICTED by fdtune's model, "
                     "not measured: %s, %s; nothing measured on %s\n *       answers it, so "
                     "this is the model's top-ranked config (the first of a dry run:\n"
                     " *       fdtune --gpu ", r->device.arch, r->device.compute_units,
                  shown, ms, gbs, r->device.arch);
    comment_text(b, r->device.name);
    fdt_sb_printf(b, " --op %s --R %d --precision %s --grid %lldx%lldx%lld --dry-run);\n"
                     " *       tune it to measure, fdtune %s, generator %s\n",
                  fdt_op_name(r->problem.op), r->problem.R, fdt_prec_name(r->problem.prec),
                  (long long)r->problem.nx, (long long)r->problem.ny, (long long)r->problem.nz,
                  r->env.fdtune_version, r->env.generator);
}

static void provenance(const fdt_exp_plan *p, fdt_sb *b)
{
    fdt_sb_puts(b, " * Provenance\n *   exported by fdtune ");
    comment_text(b, p->fdtune_version[0] ? p->fdtune_version : "(unknown version)");
    fdt_sb_printf(b, " on %s", p->exported);
    if (p->command[0]) {
        fdt_sb_puts(b, "\n *   command: ");
        comment_text(b, p->command);
    }
    fdt_sb_puts(b, "\n *   database: ");
    comment_text(b, p->database[0] ? p->database : "(none)");
    if (p->system_database[0]) {
        fdt_sb_puts(b, "\n *   system database: ");
        comment_text(b, p->system_database);
    }
    /* The user's runs, then the system database's (ids are per database). */
    fdt_sb_puts(b, "\n *   runs:");
    size_t nuser = 0;
    for (size_t i = 0; i < p->nruns; i++)
        if (p->run_sources[i] == FDT_DB_USER)
            fdt_sb_printf(b, "%s %lld", nuser++ ? "," : "", (long long)p->runs[i]);
    if (!nuser)
        fdt_sb_puts(b, " none");
    for (size_t i = 0, k = 0; i < p->nruns; i++)
        if (p->run_sources[i] == FDT_DB_SYSTEM)
            fdt_sb_printf(b, "%s %lld", k++ ? "," : "; system database:", (long long)p->runs[i]);
    fdt_sb_printf(b, "\n *   generator fingerprint of the kernels below: %s\n", p->generator);
    fdt_sb_puts(b, " *   devices:\n");
    for (size_t i = 0; i < p->ndevices; i++) {
        const fdt_device *d = &p->devices[i];
        fdt_sb_puts(b, " *     ");
        comment_text(b, d->name);
        fdt_sb_printf(b, ": %s, %s, %d CUs, %.0f GiB", d->backend, d->arch, d->compute_units,
                      d->mem_bytes / 1073741824.0);
        if (d->uuid[0]) {
            fdt_sb_puts(b, ", uuid ");
            comment_text(b, d->uuid);
        }
        if (p->device_sources[i] == FDT_DB_SYSTEM)
            fdt_sb_puts(b, " (system database)");
        else if (p->device_sources[i] == FDT_DB_MODEL)
            fdt_sb_puts(b, " (GPU catalogue: nothing measured, the model's predictions)");
        fdt_sb_puts(b, "\n");
    }
    fdt_sb_puts(b, " *   tuned results (best config per device model and grid: median time of the "
                   "run's\n *   timing, effective bandwidth, fraction of the device-to-device "
                   "copy bandwidth\n *   measured in the same run, and where it was measured; "
                   "PREDICTED: the model's answer\n *   where nothing measured answers):\n");
    for (size_t f = 0; f < p->nfam; f++)
        for (size_t t = 0; t < p->fam[f].ntuned; t++) {
            const fdt_exp_tuned *tu = &p->fam[f].tuned[t];
            const fdt_db_eval *ev = &tu->row.ev;
            const fdt_db_env *v = &tu->row.env;
            char key[160];
            fdt_problem_format(&tu->row.problem, key, sizeof key);
            fdt_sb_printf(b, " *     fdtuned_%s variants %d/%d: %s on ", p->fam[f].name,
                          tu->vconst, tu->vruntime, key);
            comment_text(b, tu->row.device.name);
            if (tu->row.source == FDT_DB_MODEL) {
                predicted(b, tu);
                continue;
            }
            char ms[32], gbs[32], frac[32], shown[FDT_CONFIG_DISPLAY_MAX];
            fdt_config_display_key(ev->config, shown, sizeof shown); /* every parameter */
            measure(ms, sizeof ms, "%.4f ms", ev->time_ms);
            measure(gbs, sizeof gbs, "%.0f GB/s", ev->gbs);
            measure(frac, sizeof frac, "%.3f of copy", ev->frac_copy);
            fdt_sb_printf(b, " (%s, %d CUs)\n *       config %s\n *       median %s, %s, %s; "
                             "run %lld%s, evaluated %s\n%s",
                          tu->row.device.arch, tu->row.device.compute_units, shown, ms,
                          gbs, frac, (long long)ev->run_id,
                          tu->row.source == FDT_DB_SYSTEM ? " of the system database" : "",
                          ev->created,
                          tu->row.cut_short ? " *       SEARCH CUT SHORT by its time limit: the "
                                              "best of what was measured, not of the space\n"
                                            : "");
            if (tu->row.stopped[0]) { /* why its search stopped, and the headroom left */
                fdt_sb_puts(b, " *       search stopped: ");
                comment_text(b, tu->row.stopped);
                fdt_sb_puts(b, "\n");
            }
            fdt_sb_puts(b, " *       driver ");
            comment_text(b, v->driver[0] ? v->driver : "-");
            fdt_sb_puts(b, ", runtime ");
            comment_text(b, v->runtime[0] ? v->runtime : "-");
            fdt_sb_puts(b, ", compiler ");
            comment_text(b, v->compiler[0] ? v->compiler : "-");
            fdt_sb_puts(b, ", fdtune ");
            comment_text(b, v->fdtune_version[0] ? v->fdtune_version : "-");
            fdt_sb_puts(b, ", generator ");
            comment_text(b, v->generator[0] ? v->generator : "-");
            fdt_sb_puts(b, "\n");
        }
    for (size_t i = 0; i < p->nnotes; i++) {
        fdt_sb_puts(b, " *   note: ");
        comment_text(b, p->notes[i]);
        fdt_sb_puts(b, "\n");
    }
}

void fdt_exp_provenance(const fdt_exp_plan *p, fdt_sb *b) { provenance(p, b); }
