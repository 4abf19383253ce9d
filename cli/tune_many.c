/* fdtune --gpu all | --devices 0,2,3 (or problems of several radii, precisions or grids):
 * a run over several GPUs of the node (tuner/fdt_many.h), one process per GPU, into one
 * database. The GPUs are --devices, else every visible one (--gpu all), else the one --gpu
 * names (the first by default); with --simulate-from, those of the simulated node. With
 * --cpu, the one device is the host CPU. */
#include "fdt_many.h"
#include "tune_cli.h"
#include "tune_output.h"

#include <string.h>

/* The visible devices (or the simulated node) into p; EXIT_OK or the exit status (printed). */
static int list_devices(const tune_args *a, fdt_probe *p, const fdt_probe **probed)
{
    fdt_err e;
    if (tune_sim_probe(a, p, probed))
        return EXIT_USAGE;
    if (!*probed) {
        if (a->cpu ? fdt_session_probe_cpu(NULL, p, &e) : fdt_probe_devices(p, &e)) {
            print_error("%s", e.msg);
            return EXIT_ERROR;
        }
        *probed = p;
    }
    if (!a->cpu && fdt_session_gpu_count(p) == 0) {
        print_no_gpu(p, "nothing can be tuned here",
                     "Without a GPU: --cpu auto tunes the host CPU; --simulate-from DB answers "
                     "from recorded results");
        return EXIT_NO_GPU;
    }
    return EXIT_OK;
}

/* The GPUs of the run, by visible index, into live (*n of them). */
static int pick_gpus(const tune_args *a, const fdt_catalogue *cat, const fdt_probe *p,
                     int *live, int *n)
{
    *n = 0;
    if (a->ndevices) {
        memcpy(live, a->devices, (size_t)a->ndevices * sizeof *live);
        *n = a->ndevices;
        return EXIT_OK;
    }
    if (a->gpu_all) { /* every GPU, never the host CPU */
        for (int i = 0; i < p->ndevices; i++)
            if (!fdt_target_device_is_cpu(&p->device[i]))
                live[(*n)++] = i;
        return EXIT_OK;
    }
    fdt_device dev;
    fdt_err e;
    if (a->cpu ? fdt_session_select_cpu(a->cpu, p, &dev, &live[0], &e)
               : fdt_session_select_gpu(cat, a->gpu, p, 1, &dev, &live[0], &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    *n = 1;
    return EXIT_OK;
}

int tune_many(tune_args *a, const fdt_catalogue *cat)
{
    fdt_recipe *rec[FDT_OP_COUNT];
    int rc = tune_load_recipes(a, rec);
    if (rc != EXIT_OK)
        return rc;
    fdt_session_opts so;
    tune_session_opts(a, cat, &so);
    fdt_probe probe;
    int live[FDT_MAX_DEVICES], n = 0;
    char db_path[4096];
    fdt_err e;
    rc = list_devices(a, &probe, &so.probed);
    if (rc == EXIT_OK)
        rc = pick_gpus(a, cat, so.probed, live, &n);
    if (rc == EXIT_OK && !a->db && fdt_db_default_path(db_path, sizeof db_path, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
    }
    if (rc != EXIT_OK) {
        tune_free_recipes(rec);
        return rc;
    }
    a->rq.command = a->command;
    many_progress prog;
    many_progress_init(&prog);
    fdt_many_report rep;
    fdt_status st = fdt_tune_many(&so, live, n, rec, &a->rq, many_progress_event, &prog, &rep, &e);
    many_progress_end(&prog);
    if (st == FDT_STATUS_USAGE || st == FDT_STATUS_ERROR || st == FDT_STATUS_NO_GPU)
        print_error("%s", e.msg);
    if (rep.n > 0 && st != FDT_STATUS_USAGE) /* a request refused ran nothing */
        many_out_summary(a->json, &rep, a->db ? a->db : db_path, a->simulate);
    fdt_many_report_free(&rep);
    tune_free_recipes(rec);
    return exit_status(st);
}
