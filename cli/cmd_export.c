/* fdtune export: writes what the tuning database knows as one self-contained header for a
 * user's HIP or CUDA code, or for C code on the CPU (--cpu), or both parts in one file (or as
 * JSON for build systems): the best kernels per device and
 * tuned grid, a fallback for other devices, launchers that pick at run time, layout helpers
 * and the provenance of every result. The user's database is consulted first, then the
 * system database (setup.c: open_dbs); both are opened read-only. A request the
 * database cannot answer is refused before anything is written, so a stale or partial
 * header never replaces a good one. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_export.h"
#include "fdt_recipe.h"
#include "fdt_session.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void export_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune export [--gpu X]... [--cpu X]... [--op OP[,OP...]] [--R N[,N...]]\n"
            "                     [--precision f32[,f64]] [--grid G[,G...]]... [--db PATH]\n"
            "                     [-o FILE] [--format header|json] [--driver]\n\n"
            "Writes one self-contained header (default) that HIP code compiled by hipcc, or CUDA\n"
            "code compiled by nvcc, includes to run fdtune's tuned kernels. Per operator, radius\n"
            "and precision it defines a launcher, e.g.\n"
            "  hipError_t fdtuned_lap_r4_f32(float *out, const float *in, int nx, int ny, int nz,\n"
            "                                float sx, float sy, float sz, hipStream_t stream);\n"
            "that picks a variant from the current device (name, architecture, compute units)\n"
            "and the grid by the rule of 'fdtune query best --nearest', among the results whose\n"
            "config can run the grid: on a tuned device model and grid the kernel tuned for it\n"
            "(grid baked in); else that model's, else another model's of the architecture, best\n"
            "config of the nearest tuned grid (grid as arguments); with none, the model's\n"
            "top-ranked config for a --gpu nothing measured answers (marked PREDICTED); else a\n"
            "fallback (fdtune's built-in default config). Layout helpers\n"
            "(fdtuned_lap_r4_f32_layout) say how to allocate and index the halo-padded arrays;\n"
            "pointers passed to launchers are allocation bases. The comment at the top records\n"
            "where every result comes from (runs, devices, driver and compiler versions, median\n"
            "time, bandwidth, fraction of copy, date). With -DFDTUNED_SELECT_ONLY the header is\n"
            "plain C/C++ with the variant tables and the selection only.\n\n"
            "  --gpu X        devices whose stored name or arch contains X (case-insensitive),\n"
            "                 else a GPU catalogue name or alias (H100, MI250X), or auto\n"
            "                 (the visible GPU's model; none visible: exit 3); repeatable\n"
            "                 (default: every device in the database)\n"
            "  --cpu X        the host CPU's results: auto (this machine's CPU model), or CPUs\n"
            "                 whose stored name or arch (x86-64-v3) contains X; repeatable.\n"
            "                 The CPU part is plain C11 + OpenMP for cc -fopenmp, launchers\n"
            "                 fdtuned_cpu_<op>_r<R>_<precision>(out, in, nx, ny, nz, ...)\n"
            "                 returning 0, picking by the current CPU (model name, arch,\n"
            "                 cores) and grid with the same rule. With --gpu too, one file\n"
            "                 holds both parts: the GPU part for HIP/CUDA (C++) code, then\n"
            "                 the CPU part for C code (-DFDTUNED_CPU_ONLY: that part alone)\n"
            "  --op OP        d2x, d2y, d2z, lap, wave, dwave; comma-separated or repeated\n"
            "                 (default: every tuned operator)\n"
            "  --absorb W[:S] with --op dwave (required): only its results of this absorbing\n"
            "                 layer (width W, strength S, default 0.1)\n"
            "  --R N          radii 1..8, comma-separated or repeated (default: every tuned\n"
            "                 radius)\n"
            "  --precision P  f32, f64 or f32,f64 (default: both)\n"
            "  --grid G       only results tuned on these grids (N^3 or NXxNYxNZ),\n"
            "                 comma-separated or repeated (default: every tuned grid)\n"
            "  --db PATH      the database (default: $FDTUNE_DB, else\n"
            "                 $XDG_DATA_HOME/fdtune/fdtune.db, else ~/.local/share/fdtune/fdtune.db)\n"
            "  --no-system-db leave out the system database (share/fdtune/system.db: results\n"
            "                 measured on the project's GPUs, consulted after yours; where you\n"
            "                 tuned a device model and grid, yours answer for it)\n"
            "  -o FILE        where to write (default: stdout); a file is replaced atomically,\n"
            "                 a device, FIFO or /dev/stdout written in place\n"
            "  --format F     header (default) or json: the same selection as data (schema %d:\n"
            "                 variants, configs, layouts, provenance)\n"
            "  --driver       after the header, a time-step driver: a plain C API over the\n"
            "                 launcher of the one time-step operator exported (wave or dwave,\n"
            "                 with its tuned deployment): fdtd_init(nx, ny, nz, sx, sy, sz),\n"
            "                 fdtd_p(), fdtd_p_prev(), fdtd_c2(), fdtd_index(i, j, k),\n"
            "                 fdtd_source(i, j, k), fdtd_step(src), fdtd_finalize(). With\n"
            "                 --cpu: host memory, the CPU launcher; with --gpu: device memory\n"
            "                 (HIP or CUDA code), the GPU launcher. Results for both, or more\n"
            "                 than one time-step operator, are refused (exit 2)\n\n"
            "Every --gpu must have a tuned result or a model answer for each --op and --grid\n"
            "asked for (or, without them, for anything matching --R and --precision); otherwise\n"
            "nothing is written.\n\n"
            "exit status: 0 written, 1 the database has nothing tuned for a requested device,\n"
            "operator or grid (--driver: no time-step operator), 2 bad arguments (--driver:\n"
            "several time-step operators, or a GPU's and a CPU's), 4 the database is missing\n"
            "or unreadable, the generator failed or the file cannot be written.\n",
            FDT_EXP_JSON_SCHEMA);
    print_exit_statuses(f);
}

enum { OPT_OP = 1000, OPT_FORMAT, OPT_DB, OPT_GPU, OPT_NO_SYSTEM, OPT_CPU, OPT_DRIVER };

typedef struct eopts {
    fdt_exp_opts x;
    const char *db, *out;
    int json, no_system, driver;
} eopts;

_Static_assert(PROBLEM_MAX_GRIDS <= FDT_EXP_MAX_GRIDS, "an export takes every grid given");

/* Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, eopts *o, fdt_sb *cmdline)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, OPT_GPU},   {"op", required_argument, 0, OPT_OP},
        {"cpu", required_argument, 0, OPT_CPU},
        {"R", required_argument, 0, 'R'},         {"precision", required_argument, 0, 'p'},
        {"grid", required_argument, 0, 'g'},      {"db", required_argument, 0, OPT_DB},
        {"absorb", required_argument, 0, OPT_ABSORB},
        {"output", required_argument, 0, 'o'},    {"format", required_argument, 0, OPT_FORMAT},
        {"no-system-db", no_argument, 0, OPT_NO_SYSTEM}, {"driver", no_argument, 0, OPT_DRIVER},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    fdt_exp_opts_init(&o->x);
    problem_args pa;
    problem_args_init(&pa);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_GPU:
        case OPT_CPU:
            if (!*optarg)
                die_usage("export", "--%s needs a name or an arch", c == OPT_CPU ? "cpu" : "gpu");
            if (o->x.ngpus == FDT_EXP_MAX_GPUS)
                die_usage("export", "at most %d --gpu and --cpu options", FDT_EXP_MAX_GPUS);
            o->x.cpu[o->x.ngpus] = c == OPT_CPU;
            o->x.gpus[o->x.ngpus++] = optarg;
            break;
        case OPT_OP: case 'R': case 'p': case 'g': case OPT_ABSORB:
            if (problem_args_take(&pa, c == OPT_OP ? 'o' : c, optarg) < 0)
                return EXIT_USAGE;
            break;
        case OPT_DB: o->db = optarg; break;
        case OPT_NO_SYSTEM: o->no_system = 1; break;
        case OPT_DRIVER: o->driver = 1; break;
        case 'o': o->out = optarg; break;
        case OPT_FORMAT:
            if (!strcmp(optarg, "json"))
                o->json = 1;
            else if (strcmp(optarg, "header"))
                die_usage("export", "--format '%s': expected header or json", optarg);
            break;
        case 'h': return print_help("export", export_usage);
        default: return bad_option("export", argv, "o:h", opts);
        }
    }
    if (optind < argc)
        die_usage("export", "unexpected argument '%s'", argv[optind]);
    if (o->out && !*o->out)
        die_usage("export", "-o needs a file name");
    if (problem_args_done(&pa))
        return EXIT_USAGE;
    o->x.absorb_w = pa.absorb_w;
    o->x.absorb_s = pa.absorb_s;
    if (o->driver && o->json)
        die_usage("export", "--driver writes C code: not with --format json");
    o->x.ops = pa.ops;
    o->x.Rs = pa.Rs;
    o->x.precs = pa.precs;
    o->x.ngrids = pa.ngrids;
    memcpy(o->x.grids, pa.grid, sizeof pa.grid);
    /* The command line goes into the provenance, as typed after "fdtune". */
    command_line(cmdline, "export", argc, argv);
    return -1;
}

static void summary(const fdt_exp_plan *p, const char *where, int json)
{
    size_t nt = 0, npred = 0;
    fdt_sb fams;
    fdt_sb_init(&fams);
    for (size_t f = 0; f < p->nfam; f++) {
        nt += p->fam[f].ntuned;
        for (size_t t = 0; t < p->fam[f].ntuned; t++)
            npred += p->fam[f].tuned[t].row.source == FDT_DB_MODEL;
        fdt_sb_printf(&fams, "%s%s%s R=%d %s", f ? ", " : "", p->fam[f].cpu ? "CPU " : "",
                      fdt_op_name(p->fam[f].op), p->fam[f].R, fdt_prec_name(p->fam[f].prec));
    }
    fdt_sb runs;
    fdt_sb_init(&runs);
    for (size_t i = 0; i < p->nruns; i++)
        fdt_sb_printf(&runs, "%s%lld%s", i ? ", " : "", (long long)p->runs[i],
                      p->run_sources[i] == FDT_DB_SYSTEM ? " (system)" : "");
    char pred[64] = "";
    if (npred)
        snprintf(pred, sizeof pred, " (%zu of them predicted by the model)", npred);
    fprintf(stderr, "fdtune export: wrote %s (%s): %s; %zu tuned results%s from %zu device%s "
                    "(run%s %s)", where, json ? "json" : "header", fdt_sb_str(&fams), nt, pred,
            p->ndevices, p->ndevices == 1 ? "" : "s", p->nruns == 1 ? "" : "s",
            p->nruns ? fdt_sb_str(&runs) : "none");
    if (!json)
        fprintf(stderr, ", %zu kernels", fdt_exp_kernel_count(p));
    fputc('\n', stderr);
    for (size_t i = 0; i < p->nnotes; i++)
        print_note("%s", p->notes[i]);
    fdt_sb_free(&fams);
    fdt_sb_free(&runs);
}

int cmd_export(int argc, char **argv)
{
    eopts o;
    fdt_sb cmdline;
    fdt_sb_init(&cmdline);
    int rc = parse_opts(argc, argv, &o, &cmdline);
    if (rc >= 0) {
        fdt_sb_free(&cmdline);
        return rc;
    }
    o.x.fdtune_version = FDTUNE_VERSION;
    o.x.command = fdt_sb_str(&cmdline);

    /* The catalogue only resolves names the database does not hold; without it, --gpu is a
     * substring match alone. */
    fdt_catalogue *cat = NULL;
    fdt_err e;
    if (o.x.ngpus && fdt_catalogue_load_default(&cat, &e) == 0)
        o.x.cat = cat;
    fdt_device visible[2]; /* --gpu auto: the visible GPU; --cpu auto: the host CPU; once */
    const char *visible_text[2] = {NULL, NULL};
    for (int g = 0; g < o.x.ngpus; g++) {
        int k = o.x.cpu[g];
        if (!fdt_session_gpu_auto(o.x.gpus[g]))
            continue;
        if (!visible_text[k]) {
            rc = k ? resolve_cpu_auto(&o.x.gpus[g], &visible[k])
                   : resolve_gpu_auto(&o.x.gpus[g], cat, &visible[k]);
            if (rc != EXIT_OK)
                break;
            visible_text[k] = o.x.gpus[g];
        }
        o.x.gpus[g] = visible_text[k];
    }
    if (rc > 0) {
        fdt_catalogue_free(cat);
        fdt_sb_free(&cmdline);
        return rc;
    }

    fdt_db *dbs[2] = {NULL, NULL};
    size_t ndbs = 0;
    fdt_exp_plan *plan = NULL;
    fdt_sb text;
    fdt_sb_init(&text);
    if (open_dbs(o.db, o.no_system, dbs, &ndbs)) {
        rc = EXIT_ERROR;
        goto done;
    }
    int st = fdt_exp_plan_make(dbs, ndbs, &o.x, &plan, &e);
    if (st == FDT_EXP_NOTHING) {
        print_error("%s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    if (st) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
        goto done;
    }
    st = o.json     ? fdt_exp_render_json(plan, &text, &e)
         : o.driver ? fdt_exp_render_driver(plan, &text, &e)
                    : fdt_exp_render_header(plan, &text, &e);
    if (st) {
        print_error("%s", e.msg);
        rc = st == FDT_EXP_NOTHING ? EXIT_FAIL : st == FDT_EXP_REFUSED ? EXIT_USAGE : EXIT_ERROR;
        goto done;
    }
    if (o.out && strcmp(o.out, "-")) {
        if (fdt_write_file_atomic(o.out, text.s ? text.s : "", text.len, &e)) {
            print_error("%s", e.msg);
            rc = EXIT_ERROR;
            goto done;
        }
    } else {
        if (stdout_write(fdt_sb_str(&text), text.len)) {
            rc = EXIT_ERROR;
            goto done;
        }
    }
    summary(plan, o.out && strcmp(o.out, "-") ? o.out : "stdout", o.json);
    rc = EXIT_OK;
done:
    fdt_sb_free(&text);
    fdt_exp_plan_free(plan);
    close_dbs(dbs, ndbs);
    fdt_catalogue_free(cat);
    fdt_sb_free(&cmdline);
    return rc;
}
