/* fdtune hybrid plan: which way to run one time step on a GPU and its host CPU (GPU only, CPU
 * only, data-parallel, task-parallel), predicted from the rates the tuning database holds
 * (tuner/fdt_hybrid_db.h gathers them, search/fdt_hybrid.h plans), each strategy's time with
 * its arithmetic, the choice and why, and the seed paper's decision; or, with --predict, the
 * same for MI300A or GH200 from published figures, labelled a prediction. Reads only. */
#include "cli.h"
#include "fdt_hybrid.h"
#include "fdt_hybrid_db.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static void hybrid_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune hybrid plan [--gpu auto|NAME] [--cpu auto|NAME] [--op OP] [--R N]\n"
            "                          [--precision P] [--grid G] [--absorb W[:S]] [--db PATH]\n"
            "                          [--predict MI300A|GH200] [--json]\n\n"
            "Predicts the time per step of one problem run GPU only, CPU only, data-parallel\n"
            "(a fraction f of the z planes on the CPU, R halo planes, or a thinner part's\n"
            "planes, exchanged each way every step, overlapped with the rest of each part)\n"
            "and task-parallel (dwave: the CPU computes the absorbing layers, the GPU the\n"
            "interior), from what the tuning database holds: the GPU's and the CPU's tuned\n"
            "bests for the problem, their best per deployment, the CPU's slabs of the sides\n"
            "deployment timed alone (the config whose slabs ran fastest is task-parallel's),\n"
            "the GPU's undamped wave at the grid (the interior kernel), their copy bandwidths\n"
            "and the host<->device link that 'fdtune devices' measures. Shows each\n"
            "prediction's arithmetic, chooses the fastest (a split must gain 3%%), and states\n"
            "the seed paper's decision in measured terms: memory- or compute-bound, and how\n"
            "much more a layer point costs the GPU than an interior point.\n\n"
            "  --gpu X          the stored GPU whose name or arch contains X (auto: the\n"
            "                   visible GPU; default auto)\n"
            "  --cpu X          the stored CPU whose name or arch contains X (auto: this\n"
            "                   host's CPU; default auto)\n"
            "  --op, --R, --precision, --grid\n"
            "                   the problem (default: dwave R=4 f32 512^3, and --absorb 16\n"
            "                   when neither --op nor --absorb is given)\n"
            ABSORB_HELP
            "  --db PATH        the tuning database (default: the user's)\n"
            "  --predict M      a prediction for a machine we cannot reach, from published\n"
            "                   figures: MI300A (AMD Instinct MI300A APU data sheet: 5.3\n"
            "                   TB/s HBM3 shared by CPU and GPU) or GH200 (NVIDIA GH200\n"
            "                   Grace Hopper Superchip data sheet: LPDDR5X ~500 GB/s, HBM3\n"
            "                   4.0 TB/s, NVLink-C2C 450 GB/s each way); the fractions of\n"
            "                   those a tuned step reaches come from the database's results\n"
            "                   for --gpu/--cpu NAME where given, else are assumed; the\n"
            "                   text says which\n"
            "  --json           one JSON document\n\n"
            "Exit status: 0 planned, 2 usage or a rate is missing (the message names the\n"
            "tune or 'fdtune devices' to run), 3 --gpu auto and no GPU, 4 database error.\n");
    print_exit_statuses(f);
}

typedef struct hybrid_args {
    problem_args pa;
    const char *gpu, *cpu, *db, *predict;
    int json;
} hybrid_args;

enum { OPT_OP = 1000, OPT_PREDICT, OPT_GPU, OPT_CPU };

/* The problem: the problem options' own rules (problem_args_done), the operator dwave when
 * none is given, and then a layer of 16 points (--absorb 16) when none is given either. */
static int finish_problem(hybrid_args *a)
{
    if (!a->pa.have_op &&
        (problem_args_take(&a->pa, 'o', "dwave") < 0 ||
         (!a->pa.have_absorb && problem_args_take(&a->pa, OPT_ABSORB, "16") < 0)))
        return EXIT_USAGE;
    if (problem_args_one(&a->pa, "hybrid plan") || problem_args_done(&a->pa))
        return EXIT_USAGE;
    fdt_err e;
    if (fdt_problem_check(&a->pa.p, &e))
        die_usage("hybrid plan", "%s", e.msg);
    return EXIT_OK;
}

static int parse(int argc, char **argv, hybrid_args *a)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, OPT_OP},       {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'},   {"grid", required_argument, 0, 'g'},
        {"absorb", required_argument, 0, OPT_ABSORB}, {"gpu", required_argument, 0, OPT_GPU},
        {"cpu", required_argument, 0, OPT_CPU},     {"db", required_argument, 0, 'D'},
        {"predict", required_argument, 0, OPT_PREDICT}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    problem_args_init(&a->pa);
    a->gpu = a->cpu = "auto";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_OP: case 'R': case 'p': case 'g': case OPT_ABSORB:
            if (problem_args_take(&a->pa, c == OPT_OP ? 'o' : c, optarg) < 0)
                return EXIT_USAGE;
            break;
        case OPT_GPU: a->gpu = optarg; break;
        case OPT_CPU: a->cpu = optarg; break;
        case 'D': a->db = optarg; break;
        case OPT_PREDICT: a->predict = optarg; break;
        case 'j': a->json = 1; break;
        case 'h': return -1;
        default: return bad_option("hybrid plan", argv, "h", opts);
        }
    }
    if (optind < argc)
        die_usage("hybrid plan", "unexpected argument '%s'", argv[optind]);
    return finish_problem(a);
}

/* ------------------------------------------------------------------ rendering */

/* The deployments' names, as the config parameter deploy has them. */
static const char *const dn[FDT_HYB_NDEPLOY] = {"complete", "inout", "sides"};

static void emit_dev(fdt_emit *m, const char *key, const fdt_hybrid_dev *d, const char *config,
                     const char *layers_config)
{
    fdt_emit_object(m, key);
    fdt_emit_str(m, "name", d->name);
    fdt_emit_str_opt(m, "config", config ? config : "");
    fdt_emit_real(m, "gbs", d->gbs);
    fdt_emit_int(m, "remeasured", d->remeasured);
    fdt_emit_real_opt(m, "own_gbs", d->remeasured ? d->own_gbs : NAN);
    fdt_emit_real_opt(m, "copy_gbs", d->copy_gbs > 0 ? d->copy_gbs : NAN);
    for (int k = 0; k < FDT_HYB_NDEPLOY; k++) {
        char mk[32];
        snprintf(mk, sizeof mk, "%s_gbs", dn[k]);
        fdt_emit_real_opt(m, mk, d->deploy_gbs[k] > 0 ? d->deploy_gbs[k] : NAN);
    }
    fdt_emit_real_opt(m, "interior_gbs", d->interior_gbs > 0 ? d->interior_gbs : NAN);
    fdt_emit_real_opt(m, "layers_ms", d->layers_ms > 0 ? d->layers_ms : NAN);
    fdt_emit_str_opt(m, "layers_config", layers_config ? layers_config : "");
    fdt_emit_int(m, "layers_remeasured", d->layers_remeasured);
    fdt_emit_real_opt(m, "part_ms", d->part_ms > 0 ? d->part_ms : NAN);
    fdt_emit_int(m, "part_planes", d->part_planes);
    fdt_emit_int(m, "part_n", d->part_n);
    fdt_emit_real(m, "launch_us", d->launch_us);
    fdt_emit_real_opt(m, "flops_gfs", d->flops_gfs > 0 ? d->flops_gfs : NAN);
    fdt_emit_end(m);
    fdt_emit_text(m, "  %-4s %s: best %.0f GB/s", key, d->name, d->gbs);
    if (config && config[0])
        fdt_emit_text(m, " (%s)", config);
    if (d->remeasured)
        fdt_emit_text(m, " re-measured %d time%s (the median; the search's own measurement, "
                      "%.0f, is the low tail its choice kept)", d->remeasured,
                      d->remeasured == 1 ? "" : "s", d->own_gbs);
    if (d->copy_gbs > 0)
        fdt_emit_text(m, ", copy %.0f GB/s (%.0f%% of it)", d->copy_gbs,
                      100 * d->gbs / d->copy_gbs);
    for (int k = 0; k < FDT_HYB_NDEPLOY; k++)
        if (d->deploy_gbs[k] > 0)
            fdt_emit_text(m, ", %s %.0f%s", dn[k], d->deploy_gbs[k],
                          d->deploy_probe[k] ? " (a probe)" : "");
    if (d->interior_gbs > 0)
        fdt_emit_text(m, ", interior (wave) %.0f", d->interior_gbs);
    if (d->layers_ms > 0 && d->layers_remeasured)
        fdt_emit_text(m, "; the sides' six slabs alone %.4f ms (the median of %d "
                      "re-measurements)", d->layers_ms, d->layers_remeasured);
    else if (d->layers_ms > 0)
        fdt_emit_text(m, "; the sides' six slabs alone %.4f ms%s", d->layers_ms,
                      d->layers_probe ? " (a probe)" : "");
    if (d->layers_ms > 0 && layers_config && layers_config[0])
        fdt_emit_text(m, " with %s (task-parallel runs it)", layers_config);
    if (d->part_ms > 0)
        fdt_emit_text(m, "; its first %d planes alone %.4f ms, back to back (the median of %d; "
                      "a data-parallel part's rate)", d->part_planes, d->part_ms, d->part_n);
    fdt_emit_text(m, "\n");
}

static void emit_inputs(fdt_emit *m, const fdt_hybrid_in *in, const fdt_hybrid_sources *src)
{
    const fdt_hybrid_link *l = &in->link;
    fdt_emit_object(m, "inputs");
    emit_dev(m, "gpu", &in->gpu, src ? src->gpu_config : NULL, NULL);
    emit_dev(m, "cpu", &in->cpu, src ? src->cpu_config : NULL,
             src ? src->cpu_layers_config : NULL);
    fdt_emit_object(m, "link");
    fdt_emit_real(m, "h2d_gbs", l->h2d_gbs);
    fdt_emit_real(m, "d2h_gbs", l->d2h_gbs);
    fdt_emit_real_opt(m, "both_gbs", l->both_gbs > 0 ? l->both_gbs : NAN);
    fdt_emit_real(m, "latency_us", l->latency_us);
    fdt_emit_real_opt(m, "row_ns", l->row_ns > 0 ? l->row_ns : NAN);
    fdt_emit_bool(m, "unified", l->unified);
    fdt_emit_real_opt(m, "shared_gbs", l->shared_gbs > 0 ? l->shared_gbs : NAN);
    fdt_emit_str_opt(m, "measured", src ? src->link_measured : "");
    fdt_emit_end(m);
    fdt_emit_real(m, "sync_us", in->sync_us);
    fdt_emit_real(m, "copy_beside", in->beside);
    fdt_emit_end(m);
    char both[32] = "(not measured)";
    if (l->both_gbs > 0)
        snprintf(both, sizeof both, "%.0f", l->both_gbs);
    if (l->unified)
        fdt_emit_text(m, "  link unified: nothing copied; shared memory %.0f GB/s\n",
                      l->shared_gbs);
    else
        fdt_emit_text(m, "  link h2d %.0f, d2h %.0f, both at once %s GB/s, latency %.1f us, "
                         "%s%.2f ns a narrow row%s%s\n",
                      l->h2d_gbs, l->d2h_gbs, both, l->latency_us,
                      l->row_ns > 0 ? "" : "(not measured: bytes alone) ", l->row_ns,
                      src && src->link_measured[0] ? ", measured " : "",
                      src ? src->link_measured : "");
    fdt_emit_text(m, "  assumed: a launch %.0f us (GPU), %.0f us (CPU); the per-step sync %.0f "
                     "us; a discrete GPU's copies beside its kernels at %.0f%% of their rate\n\n",
                  in->gpu.launch_us, in->cpu.launch_us, in->sync_us, 100 * in->beside);
}

static void emit_part(fdt_emit *m, const char *key, const fdt_hybrid_part *q, int split)
{
    fdt_emit_object(m, key);
    fdt_emit_real(m, "points", q->points);
    fdt_emit_real(m, "bytes", q->bytes);
    fdt_emit_real(m, "gbs", q->gbs);
    fdt_emit_real(m, "net_gbs", q->net_gbs);
    fdt_emit_int(m, "launches", q->launches);
    fdt_emit_real(m, "ms", q->t_ms);
    fdt_emit_real(m, "first_ms", q->first_ms);
    fdt_emit_real(m, "thin_bytes", q->thin_bytes);
    fdt_emit_int(m, "thin_planes", q->thin_planes);
    fdt_emit_real_opt(m, "thin_gbs", q->thin_gbs > 0 ? q->thin_gbs : NAN);
    fdt_emit_end(m);
    if (!split) {
        fdt_emit_text(m, "      %s %.4f ms = %.4g GB / %.0f GB/s (the measured step)\n", key,
                      q->t_ms, q->bytes * 1e-9, q->gbs);
        return;
    }
    fdt_emit_text(m, "      %s %.4f ms = ", key, q->t_ms);
    if (q->thin_bytes > 0)
        fdt_emit_text(m, "%.4g GB / %.0f GB/s (the first %d planes' rate, timed alone, its "
                         "launch out)%s", q->thin_bytes * 1e-9, q->thin_gbs, q->thin_planes,
                      q->bytes > q->thin_bytes ? " + " : "");
    if (q->bytes > q->thin_bytes)
        fdt_emit_text(m, "%.4g GB / %.0f GB/s (%.0f measured, its launches out)",
                      (q->bytes - q->thin_bytes) * 1e-9, q->net_gbs, q->gbs);
    fdt_emit_text(m, " + %d launches x %.0f us; first what the other needs, %.4f ms\n",
                  q->launches, q->launch_us, q->first_ms);
}

static void emit_strategy(fdt_emit *m, const fdt_hybrid_in *in, const fdt_hybrid_plan *pl,
                          fdt_hybrid_strategy k)
{
    int64_t nz = in->p.nz;
    int unified = in->link.unified;
    const fdt_hybrid_pred *s = &pl->s[k];
    fdt_emit_object(m, fdt_hybrid_strategy_name(k));
    fdt_emit_bool(m, "ok", s->ok);
    fdt_emit_str_opt(m, "note", s->why);
    fdt_emit_real_opt(m, "ms", s->ok ? s->t_ms : NAN);
    fdt_emit_str_opt(m, "bound", s->ok ? s->bound : "");
    if (!s->ok) {
        fdt_emit_end(m);
        fdt_emit_text(m, "  %-5s -  %s\n", fdt_hybrid_strategy_name(k), s->why);
        return;
    }
    fdt_emit_text(m, "  %-5s %.4f ms per step, bound by %s", fdt_hybrid_strategy_name(k),
                  s->t_ms, s->bound);
    if (k == FDT_HYB_DATA)
        fdt_emit_text(m, "; the CPU %lld of %lld z planes, f = %.4f (the rates' balance %.4f)",
                      (long long)pl->cpu_planes, (long long)nz, pl->f, pl->f_balance);
    fdt_emit_text(m, "\n");
    if (s->why[0])
        fdt_emit_text(m, "      note: %s\n", s->why);
    if (k == FDT_HYB_GPU || k == FDT_HYB_CPU) {
        int gpu = k == FDT_HYB_GPU;
        emit_part(m, gpu ? "gpu" : "cpu", gpu ? &s->gpu : &s->cpu, 0);
    } else {
        emit_part(m, "gpu", &s->gpu, 1);
        emit_part(m, "cpu", &s->cpu, 1);
        fdt_emit_real(m, "copy_bytes", s->copy_bytes);
        fdt_emit_real(m, "copy_rows", s->copy_rows);
        fdt_emit_real(m, "copy_bytes_h2d", s->copy_bytes_h2d);
        fdt_emit_real(m, "copy_rows_h2d", s->copy_rows_h2d);
        fdt_emit_real(m, "copy_ms", s->copy_ms);
        fdt_emit_real(m, "exchange_ms", s->exch_ms);
        fdt_emit_real(m, "floor_ms", s->floor_ms);
        fdt_emit_real(m, "serial_ms", s->serial_ms);
        fdt_emit_real(m, "sync_ms", s->sync_ms);
        fdt_emit_text(m, "      exchange %.4f ms = first %.4f + copies %.4f (%.3g MB in %.3g rows "
                         "to the CPU, %.3g MB in %.3g to the GPU%s); memory floor %.4f ms; + "
                         "sync %.4f ms\n",
                      s->exch_ms, s->exch_ms - s->copy_ms, s->copy_ms, s->copy_bytes * 1e-6,
                      s->copy_rows, s->copy_bytes_h2d * 1e-6, s->copy_rows_h2d,
                      unified ? ", read in place" : "", s->floor_ms, s->sync_ms);
        if (s->serial_ms > 0)
            fdt_emit_text(m, "      gpu+copies %.4f ms = the GPU's %.4f + what its copies "
                             "(%.4f) have left when its kernels end (%.0f%% of their rate "
                             "beside them after its first %.4f)\n", s->serial_ms, s->gpu.t_ms,
                          s->copy_ms, 100 * in->beside, s->gpu.first_ms);
    }
    fdt_emit_end(m);
}

/* A flag that may be unknown: true, false, or null when negative. */
static void emit_flag(fdt_emit *m, const char *key, int v)
{
    if (v < 0)
        fdt_emit_null(m, key);
    else
        fdt_emit_bool(m, key, v);
}

/* The divergence's sentence: the layer point's cost, the verdict, each deployment's. */
static void emit_divergence(fdt_emit *m, const fdt_hybrid_decision *d)
{
    if (d->divergent < 0) {
        fdt_emit_text(m, "; divergence unknown (needs the GPU's dwave deployments and its wave "
                         "at this grid)");
        return;
    }
    fdt_emit_text(m, "; a layer point costs the GPU %.2fx an interior point: %s (from %.1fx; "
                     "by deployment:", d->layer_cost,
                  d->divergent ? "divergent" : "not divergent", FDT_HYB_DIVERGENT);
    for (int k = 0; k < FDT_HYB_NDEPLOY; k++)
        if (d->layer_cost_by[k] > 0)
            fdt_emit_text(m, " %s %.2fx", dn[k], d->layer_cost_by[k]);
    fdt_emit_text(m, ")");
}

static void emit_decision(fdt_emit *m, const fdt_hybrid_plan *pl)
{
    const fdt_hybrid_decision *d = &pl->d;
    fdt_emit_object(m, "paper");
    fdt_emit_real(m, "flops_per_point", d->flops_pt);
    fdt_emit_real(m, "bytes_per_point", d->bytes_pt);
    fdt_emit_real(m, "intensity", d->intensity);
    fdt_emit_real_opt(m, "gpu_balance", d->gpu_balance > 0 ? d->gpu_balance : NAN);
    emit_flag(m, "compute_bound", d->compute_bound);
    fdt_emit_real_opt(m, "layer_cost", d->layer_cost > 0 ? d->layer_cost : NAN);
    for (int k = 0; k < FDT_HYB_NDEPLOY; k++) {
        char key[32];
        snprintf(key, sizeof key, "layer_cost_%s", dn[k]);
        fdt_emit_real_opt(m, key, d->layer_cost_by[k] > 0 ? d->layer_cost_by[k] : NAN);
    }
    emit_flag(m, "divergent", d->divergent);
    fdt_emit_str(m, "strategy", fdt_hybrid_strategy_name(d->paper));
    fdt_emit_end(m);
    fdt_emit_text(m, "\nThe paper's decision: %.0f flop / %.1f B = %.2f flop/B", d->flops_pt,
                  d->bytes_pt, d->intensity);
    if (d->compute_bound < 0)
        fdt_emit_text(m, " (the GPU's flop/byte balance unknown)");
    else
        fdt_emit_text(m, " against the GPU's %.1f flop/B: %s-bound", d->gpu_balance,
                      d->compute_bound ? "compute" : "memory");
    emit_divergence(m, d);
    fdt_emit_text(m, "; the paper would take %s-parallel (its strategy always splits; the "
                     "predicted times above decide).\n", fdt_hybrid_strategy_name(d->paper));
}

static void render(fdt_emit *m, const hybrid_args *a, const fdt_hybrid_in *in,
                   const fdt_hybrid_sources *src, const fdt_hybrid_machine *mc,
                   const fdt_hybrid_plan *pl)
{
    char key[128];
    fdt_problem_format(&in->p, key, sizeof key);
    emit_doc_begin(m);
    fdt_emit_object(m, "hybrid_plan");
    fdt_problem_emit(m, &in->p);
    fdt_emit_bool(m, "prediction", a->predict != NULL);
    fdt_emit_text(m, "%shybrid plan: %s%s\n", mc ? "PREDICTION (not measured) " : "", key,
                  mc ? "" : " (from measured rates)");
    if (mc) {
        fdt_emit_str(m, "machine", mc->name);
        fdt_emit_str(m, "published", mc->published);
        fdt_emit_str(m, "assumed", mc->assumed);
        fdt_emit_text(m, "  machine %s\n  published: %s\n  assumed: %s\n", mc->name,
                      mc->published, mc->assumed);
    }
    emit_inputs(m, in, src);
    fdt_emit_object(m, "strategies");
    for (int k = 0; k < FDT_HYB_COUNT; k++)
        emit_strategy(m, in, pl, (fdt_hybrid_strategy)k);
    fdt_emit_end(m);
    fdt_emit_str(m, "choice", fdt_hybrid_strategy_name(pl->choice));
    fdt_emit_str(m, "why", pl->why);
    fdt_emit_real(m, "gain", pl->gain);
    fdt_emit_real(m, "split_gain", pl->split_gain);
    fdt_emit_int(m, "cpu_planes", pl->cpu_planes);
    fdt_emit_real(m, "f", pl->f);
    fdt_emit_text(m, "\nChoice%s: %s\n", mc ? " (predicted)" : "", pl->why);
    emit_decision(m, pl);
    fdt_emit_end(m);
    fdt_emit_end(m);
}

/* ------------------------------------------------------------------ the command */

/* The measured input: --gpu/--cpu resolved, the database read. */
static int gather(hybrid_args *a, fdt_hybrid_in *in, fdt_hybrid_sources *src)
{
    fdt_device gdev, cdev;
    int rc = resolve_gpu_auto(&a->gpu, NULL, &gdev);
    if (rc == EXIT_OK)
        rc = resolve_cpu_auto(&a->cpu, &cdev);
    if (rc != EXIT_OK)
        return rc;
    fdt_db *db;
    if (open_db_readonly(a->db, &db))
        return EXIT_ERROR;
    fdt_err e;
    fdt_status st = fdt_hybrid_gather(db, a->gpu, a->cpu, &a->pa.p, in, src, &e);
    fdt_db_close(db);
    if (st != FDT_STATUS_OK)
        print_error("%s", e.msg);
    return exit_status(st);
}

/* The fractions a prediction takes from measured rates, where --gpu and --cpu name stored
 * devices with results (auto is not resolved: a prediction needs no GPU). */
static void measured_for_prediction(hybrid_args *a, fdt_hybrid_in *in)
{
    memset(in, 0, sizeof *in);
    if (!strcmp(a->gpu, "auto") || !strcmp(a->cpu, "auto"))
        return;
    fdt_db *db;
    fdt_hybrid_sources src;
    fdt_err e;
    if (open_db_readonly(a->db, &db))
        return;
    if (fdt_hybrid_gather(db, a->gpu, a->cpu, &a->pa.p, in, &src, &e) != FDT_STATUS_OK)
        print_note("--predict: the measured fractions are not all there (%s); the missing "
                   "ones are assumed", e.msg);
    fdt_db_close(db);
}

int cmd_hybrid(int argc, char **argv)
{
    if (argc < 2) {
        hybrid_usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return print_help("hybrid", hybrid_usage);
    if (argv[1][0] == '-') { /* an option before the subcommand */
        static const struct option help_only[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
        optind = 2;
        optopt = 0;
        return bad_option("hybrid", argv, "h", help_only);
    }
    if (strcmp(argv[1], "plan"))
        die_usage("hybrid", "unknown subcommand '%s' (the one subcommand: plan)", argv[1]);
    hybrid_args a;
    int rc = parse(argc - 1, argv + 1, &a);
    if (rc < 0)
        return print_help("hybrid", hybrid_usage);
    if (rc != EXIT_OK)
        return rc;
    fdt_hybrid_in in;
    fdt_hybrid_sources src;
    fdt_hybrid_machine mc;
    fdt_err e;
    if (a.predict) {
        fdt_hybrid_in measured;
        measured_for_prediction(&a, &measured);
        fdt_status st = fdt_hybrid_predict(a.predict, &a.pa.p, &measured, &in, &mc, &e);
        if (st != FDT_STATUS_OK)
            die_usage("hybrid plan", "%s", e.msg);
    } else if ((rc = gather(&a, &in, &src)) != EXIT_OK) {
        return rc;
    }
    fdt_hybrid_plan pl;
    if (fdt_hybrid_plan_make(&in, &pl, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, a.json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
    render(&m, &a, &in, a.predict ? NULL : &src, a.predict ? &mc : NULL, &pl);
    return emit_done(&m) ? EXIT_ERROR : EXIT_OK;
}
