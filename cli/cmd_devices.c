/* fdtune devices: every GPU the backends can see, with identity, versions and the measured
 * device-to-device copy bandwidth; when there is none, which backends were tried and why
 * they found nothing; the host CPU (backend cpu) with its facts and copy bandwidth; and the
 * files each backend's libraries were loaded from, with the
 * versions they report, so that a user can tell what fdtune runs against. A table, or JSON
 * with --json, through the emitter. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_eval.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static void devices_usage(FILE *f)
{
    fprintf(f, "usage: fdtune devices [--json] [--no-bandwidth] [--db PATH]\n\n"
               "Lists the GPUs visible through every backend (cuda, hip) with name, architecture,\n"
               "compute units, memory, L2, driver/runtime/compiler versions, SM and memory clocks\n"
               "now (current/max MHz and throttle reasons; NVIDIA, through NVML) and UUID, and\n"
               "measures each one's device-to-device copy bandwidth (1 GiB buffers; bytes read +\n"
               "written) and its link to the host: pinned copies of 64 MiB host to device (h2d),\n"
               "device to host (d2h), both at once (each direction's GB/s), a 4 KiB copy's time,\n"
               "and whether the GPU reads host memory in place (unified: an APU, NVLink-C2C).\n"
               "The link is stored in the tuning database (--db PATH, created when missing; else\n"
               "the default database when there is one), where the hybrid planner reads it.\n"
               "Then the host CPU (backend cpu): model, ISA level (arch), sockets, cores and\n"
               "hardware threads this process may use, NUMA nodes, SIMD ISA, caches, memory,\n"
               "the C compiler ($CC, else cc) and the copy bandwidth over one pinned thread per\n"
               "core (the faster of ordinary and streaming stores: the denominator of every\n"
               "fraction of copy on the CPU). No C compiler, or one without OpenMP, is an\n"
               "error (exit status 4) after the listing.\n"
               "Then the libraries each backend loaded: their files (real paths) and versions.\n");
    print_exit_statuses(f);
}

/* One device: the table shows its position, backend:index and sizes for people; the machine
 * forms the raw fields. */
static const fdt_col device_cols[] = {
    {"#", "#", FDT_COL_INT, NULL, FDT_SHOW_TEXT, 0},
    {"index", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"backend", "backend", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
    {"backend", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"vendor", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"name", "name", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"arch", "arch", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"compute_units", "CUs", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"warp_size", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"memory_bytes", "memory", FDT_COL_REAL, "%.1f GiB", FDT_SHOW_TEXT, 0},
    {"memory_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"l2_bytes", "L2", FDT_COL_REAL, "%.0f MiB", FDT_SHOW_TEXT, 0},
    {"l2_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"shared_per_block", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"peak_bandwidth_gbs", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"copy_bandwidth_gbs", "copy GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, 0},
    {"link_h2d_gbs", "h2d", FDT_COL_REAL_OPT, "%.1f", FDT_SHOW_ALL, FDT_COL_DASH},
    {"link_d2h_gbs", "d2h", FDT_COL_REAL_OPT, "%.1f", FDT_SHOW_ALL, FDT_COL_DASH},
    {"link_both_gbs", "both", FDT_COL_REAL_OPT, "%.1f", FDT_SHOW_ALL, FDT_COL_DASH},
    {"link_latency_us", "4K us", FDT_COL_REAL_OPT, "%.1f", FDT_SHOW_ALL, FDT_COL_DASH},
    {"link_row_ns", "row ns", FDT_COL_REAL_OPT, "%.2f", FDT_SHOW_ALL, FDT_COL_DASH},
    {"unified", "unified", FDT_COL_STR_OPT, NULL, FDT_SHOW_TEXT, FDT_COL_DASH},
    {"unified", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"uuid", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"pci", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"driver", "driver", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"driver_source", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"clocks", "clocks MHz", FDT_COL_STR_OPT, NULL, FDT_SHOW_TEXT, FDT_COL_DASH},
    {"sm_clock_mhz", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"sm_clock_max_mhz", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"mem_clock_mhz", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"mem_clock_max_mhz", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"throttle_reasons", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"runtime", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"compiler", "compiler", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"uuid", "uuid", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
};

/* The host CPU (backend cpu). */
static const fdt_col host_cols[] = {
    {"backend", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"vendor", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"name", "name", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"arch", "arch", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"sockets", "sockets", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"cores", "cores", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"threads", "threads", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"numa_nodes", "NUMA", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"simd", "SIMD", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"vector_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"l1d_bytes", "L1d/core", FDT_COL_REAL, "%.0f KiB", FDT_SHOW_TEXT, 0},
    {"l1d_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"l2_bytes", "L2/core", FDT_COL_REAL, "%.0f KiB", FDT_SHOW_TEXT, 0},
    {"l2_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"llc_bytes", "LLC", FDT_COL_REAL, "%.0f MiB", FDT_SHOW_TEXT, 0},
    {"llc_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"memory_bytes", "memory", FDT_COL_REAL, "%.1f GiB", FDT_SHOW_TEXT, 0},
    {"memory_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"core_ids", "CPU ids", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"copy_bandwidth_gbs", "copy GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, 0},
    {"compiler", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"uuid", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
};

static const fdt_col backend_cols[] = {
    {"name", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"available", "", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
    {"devices", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"compiler", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"message", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
};

/* One library a backend loaded (fdt_rt_lib). */
static const fdt_col library_cols[] = {
    {"backend", "backend", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"library", "library", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"version", "version", FDT_COL_STR_OPT, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"path", "file", FDT_COL_STR_OPT, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"note", "note", FDT_COL_STR_OPT, NULL, FDT_SHOW_ALL, 0},
};

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

static void render_libraries(fdt_emit *m, const fdt_rt_lib *libs, int nlibs)
{
    fdt_emit_text(m, "\nLibraries:\n");
    fdt_emit_array(m, "libraries");
    fdt_emit_table(m, library_cols, NCOLS(library_cols));
    for (int i = 0; i < nlibs; i++) {
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, libs[i].backend);
        fdt_emit_cell_str(m, libs[i].role);
        fdt_emit_cell_str(m, libs[i].version);
        fdt_emit_cell_str(m, libs[i].path);
        fdt_emit_cell_str(m, libs[i].note);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
}

/* The clocks cells: "SM 1755/1980 mem 2619/2619" (current/max) with the throttle reasons
 * after it for people; the numbers, and the reasons as a comma-separated list ("none": NVML
 * says none), for machines; unknown ones (AMD, no NVML) empty. */
static void clock_cells(fdt_emit *m, const fdt_clocks *c)
{
    char text[320] = "", why[200] = "";
    if (c->reasons_known)
        fdt_throttle_names(c->reasons, why, sizeof why);
    if (c->known)
        snprintf(text, sizeof text, "SM %d/%d mem %d/%d%s%s%s", c->sm_mhz, c->sm_max_mhz,
                 c->mem_mhz, c->mem_max_mhz, why[0] ? " (" : "", why, why[0] ? ")" : "");
    if (c->reasons_known && !why[0])
        snprintf(why, sizeof why, "none");
    fdt_emit_cell_str(m, text);
    fdt_emit_cell_int(m, c->known ? c->sm_mhz : -1);
    fdt_emit_cell_int(m, c->known ? c->sm_max_mhz : -1);
    fdt_emit_cell_int(m, c->known ? c->mem_mhz : -1);
    fdt_emit_cell_int(m, c->known ? c->mem_max_mhz : -1);
    fdt_emit_cell_str(m, why);
}

/* The host link's cells; l NULL: not measured (empty). */
static void link_cells(fdt_emit *m, const fdt_link *l)
{
    fdt_emit_cell_real(m, l ? l->h2d_gbs : NAN);
    fdt_emit_cell_real(m, l ? l->d2h_gbs : NAN);
    fdt_emit_cell_real(m, l ? l->both_gbs : NAN);
    fdt_emit_cell_real(m, l ? l->latency_us : NAN);
    fdt_emit_cell_real(m, l ? l->row_ns : NAN);
    fdt_emit_cell_str(m, !l ? "" : l->unified ? "yes" : "no");
    fdt_emit_cell_int(m, l ? l->unified : -1);
}

static void device_row(fdt_emit *m, int i, const fdt_device *d, double gbs, const fdt_link *l)
{
    char where[32];
    snprintf(where, sizeof where, "%s:%d", d->backend, d->index);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_int(m, i);
    fdt_emit_cell_int(m, d->index);
    fdt_emit_cell_str(m, where);
    fdt_emit_cell_str(m, d->backend);
    fdt_emit_cell_str(m, d->vendor);
    fdt_emit_cell_str(m, d->name);
    fdt_emit_cell_str(m, d->arch);
    fdt_emit_cell_int(m, d->compute_units);
    fdt_emit_cell_int(m, d->warp_size);
    fdt_emit_cell_real(m, d->mem_bytes / 1073741824.0);
    fdt_emit_cell_int(m, d->mem_bytes);
    fdt_emit_cell_real(m, d->l2_bytes / 1048576.0);
    fdt_emit_cell_int(m, d->l2_bytes);
    fdt_emit_cell_int(m, d->shared_per_block);
    fdt_emit_cell_real(m, d->peak_bw_gbs);
    fdt_emit_cell_real(m, gbs > 0 ? gbs : NAN);
    link_cells(m, l);
    fdt_emit_cell_str(m, d->uuid);
    fdt_emit_cell_str(m, d->pci);
    fdt_emit_cell_str(m, d->driver_version);
    fdt_emit_cell_str(m, d->driver_source);
    clock_cells(m, &d->clocks);
    fdt_emit_cell_str(m, d->runtime_version);
    fdt_emit_cell_str(m, d->compiler_version);
    fdt_emit_cell_str(m, d->uuid);
    fdt_emit_row_end(m);
}

/* The host CPU: one row, or what kept it from being described (host NULL, why). */
static void render_host(fdt_emit *m, const fdt_device *d, double gbs, const char *why)
{
    fdt_emit_text(m, "\nHost CPU (backend cpu):\n");
    fdt_emit_array(m, "hosts");
    fdt_emit_table(m, host_cols, NCOLS(host_cols));
    if (d) {
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, d->backend);
        fdt_emit_cell_str(m, d->vendor);
        fdt_emit_cell_str(m, d->name);
        fdt_emit_cell_str(m, d->arch);
        fdt_emit_cell_int(m, d->sockets);
        fdt_emit_cell_int(m, d->compute_units);
        fdt_emit_cell_int(m, d->threads);
        fdt_emit_cell_int(m, d->numa_nodes);
        fdt_emit_cell_str(m, d->simd);
        fdt_emit_cell_int(m, d->vector_bytes);
        fdt_emit_cell_real(m, d->l1d_bytes / 1024.0);
        fdt_emit_cell_int(m, d->l1d_bytes);
        fdt_emit_cell_real(m, d->l2_bytes / 1024.0);
        fdt_emit_cell_int(m, d->l2_bytes);
        fdt_emit_cell_real(m, d->llc_bytes / 1048576.0);
        fdt_emit_cell_int(m, d->llc_bytes);
        fdt_emit_cell_real(m, d->mem_bytes / 1073741824.0);
        fdt_emit_cell_int(m, d->mem_bytes);
        fdt_emit_cell_str(m, d->core_ids);
        fdt_emit_cell_real(m, gbs > 0 ? gbs : NAN);
        fdt_emit_cell_str(m, d->compiler_version);
        fdt_emit_cell_str(m, d->uuid);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    if (d)
        fdt_emit_text(m, "(compiler: %s; copy: one pinned thread per core, the faster of "
                         "ordinary and streaming stores)\n", d->compiler_version);
    else
        fdt_emit_text(m, "  not usable: %s\n", why);
}

/* The table form says which backends were tried when no GPU is visible, and what a backend
 * had to say under the table otherwise; the JSON document lists backends and devices. */
static void render(fdt_emit *m, const fdt_probe *p, const double *gbs, const fdt_link *links,
                   const int *have_link, const fdt_device *host, double host_gbs,
                   const char *host_why, const fdt_rt_lib *libs, int nlibs)
{
    emit_doc_begin(m);
    fdt_emit_array(m, "backends");
    fdt_emit_table(m, backend_cols, NCOLS(backend_cols));
    for (int i = 0; i < p->nbackends; i++) {
        const fdt_backend_probe *b = &p->backend[i];
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, b->name);
        fdt_emit_cell_bool(m, b->available != 0);
        fdt_emit_cell_int(m, b->count);
        fdt_emit_cell_str(m, b->compiler);
        fdt_emit_cell_str(m, b->message);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    if (p->ndevices == 0) {
        fdt_emit_text(m, "No GPU is visible. Backends tried:\n");
        for (int i = 0; i < p->nbackends; i++)
            fdt_emit_text(m, "  %-5s %s (compiler: %s)\n", p->backend[i].name,
                          p->backend[i].message[0] ? p->backend[i].message : "no device",
                          p->backend[i].compiler);
        if (p->nbackends == 0)
            fdt_emit_text(m, "  none: this fdtune was built without GPU backends\n");
    }
    fdt_emit_array(m, "devices");
    fdt_emit_table(m, device_cols, NCOLS(device_cols));
    for (int i = 0; i < p->ndevices; i++)
        device_row(m, i, &p->device[i], gbs[i], have_link[i] ? &links[i] : NULL);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    for (int i = 0; p->ndevices && i < p->nbackends; i++)
        if (p->backend[i].message[0])
            fdt_emit_text(m, "(%s: %s)\n", p->backend[i].name, p->backend[i].message);
    render_host(m, host, host_gbs, host_why);
    render_libraries(m, libs, nlibs);
    fdt_emit_end(m);
}

/* One GPU's copy bandwidth and host link (have_link 1 when measured); failures printed. */
static void measure_device(const fdt_device *d, int json, double *gbs, fdt_link *l,
                           int *have_link)
{
    fdt_err e;
    if (!json)
        fprintf(stderr, "measuring the copy bandwidth and host link of %s %d (%s)...\n",
                d->backend, d->index, d->name);
    if (fdt_device_copy_bandwidth(d, (size_t)1 << 30, gbs, &e))
        print_error("%s %d: copy bandwidth: %s", d->backend, d->index, e.msg);
    *have_link = fdt_device_link(d, l, &e) == 0;
    if (!*have_link)
        print_error("%s %d: host link: %s", d->backend, d->index, e.msg);
}

/* The measured links into the database (open_db_store: none there, nothing stored). */
static int store_links(const char *path, const fdt_probe *p, const fdt_link *links,
                       const int *have, int json)
{
    int any = 0;
    for (int i = 0; i < p->ndevices; i++)
        any |= have[i];
    fdt_db *db = NULL;
    if (!any)
        return 0;
    if (open_db_store(path, &db))
        return -1;
    fdt_err e;
    int rc = 0;
    for (int i = 0; db && !rc && i < p->ndevices; i++)
        if (have[i] && fdt_device_link_put(db, &p->device[i], &links[i], &e)) {
            print_error("%s %d: storing the host link: %s", p->device[i].backend,
                        p->device[i].index, e.msg);
            rc = -1;
        }
    if (db && !rc && !json)
        print_note("host links stored in %s", fdt_db_path(db));
    if (!db && !json)
        print_note("host links not stored: no tuning database (name one with --db PATH)");
    fdt_db_close(db);
    return rc;
}

int cmd_devices(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                         {"no-bandwidth", no_argument, 0, 'n'},
                                         {"db", required_argument, 0, 'D'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int json = 0, bandwidth = 1, c, rc = EXIT_OK;
    const char *db_path = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'n': bandwidth = 0; break;
        case 'D': db_path = optarg; break;
        case 'h': return print_help("devices", devices_usage);
        default: return bad_option("devices", argv, "h", opts);
        }
    }
    if (optind < argc)
        die_usage("devices", "unexpected argument '%s'", argv[optind]);
    fdt_probe p;
    fdt_err e;
    if (fdt_probe_devices(&p, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    fdt_rt_lib libs[FDT_RT_MAX_LIBS];
    int nlibs = 0;
    if (fdt_rt_libraries(libs, FDT_RT_MAX_LIBS, &nlibs, &e))
        print_error("libraries: %s", e.msg);
    double gbs[FDT_MAX_DEVICES] = {0};
    fdt_link links[FDT_MAX_DEVICES];
    int have_link[FDT_MAX_DEVICES] = {0};
    for (int i = 0; bandwidth && i < p.ndevices; i++) {
        measure_device(&p.device[i], json, &gbs[i], &links[i], &have_link[i]);
    if (store_links(db_path, &p, links, have_link, json))
        rc = EXIT_ERROR;
    }
    fdt_device host;
    fdt_err host_why;
    double host_gbs = 0;
    int host_ok = fdt_probe_host(&host, &host_why) == 0;
    if (host_ok && bandwidth) {
        if (!json)
            fprintf(stderr, "measuring the copy bandwidth of the host CPU (%s)...\n", host.name);
        if (fdt_device_copy_bandwidth(&host, (size_t)1 << 30, &host_gbs, &e))
            print_error("cpu: copy bandwidth: %s", e.msg);
    }
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
    render(&m, &p, gbs, links, have_link, host_ok ? &host : NULL, host_gbs, host_why.msg, libs,
           nlibs);
    if (emit_done(&m))
        rc = EXIT_ERROR;
    if (!host_ok) {
        print_error("%s", host_why.msg);
        rc = EXIT_ERROR;
    }
    return rc;
}
