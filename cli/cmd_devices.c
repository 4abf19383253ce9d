/* fdtune devices: every GPU the backends can see, with identity, versions and the measured
 * device-to-device copy bandwidth; when there is none, which backends were tried and why
 * they found nothing. */
#include "cli.h"
#include "fdt_eval.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static void devices_usage(FILE *f)
{
    fprintf(f, "usage: fdtune devices [--json] [--no-bandwidth]\n\n"
               "Lists the GPUs visible through every backend (cuda, hip) with name, architecture,\n"
               "compute units, memory, L2, driver/runtime/compiler versions and UUID, and measures\n"
               "each one's device-to-device copy bandwidth (1 GiB buffers; bytes read + written).\n");
}

static void json_device(fdt_sb *b, const fdt_device *d, double gbs)
{
    fdt_sb_puts(b, "{");
    json_kv_int(b, "index", d->index, 1);
    json_kv_str(b, "backend", d->backend, 1);
    json_kv_str(b, "vendor", d->vendor, 1);
    json_kv_str(b, "name", d->name, 1);
    json_kv_str(b, "arch", d->arch, 1);
    json_kv_int(b, "compute_units", d->compute_units, 1);
    json_kv_int(b, "warp_size", d->warp_size, 1);
    json_kv_int(b, "memory_bytes", d->mem_bytes, 1);
    json_kv_int(b, "l2_bytes", d->l2_bytes, 1);
    json_kv_int(b, "shared_per_block", d->shared_per_block, 1);
    json_kv_num(b, "peak_bandwidth_gbs", d->peak_bw_gbs, 1);
    json_kv_num(b, "copy_bandwidth_gbs", gbs > 0 ? gbs : NAN, 1);
    json_kv_str(b, "uuid", d->uuid, 1);
    json_kv_str(b, "pci", d->pci, 1);
    json_kv_str(b, "driver", d->driver_version, 1);
    json_kv_str(b, "runtime", d->runtime_version, 1);
    json_kv_str(b, "compiler", d->compiler_version, 0);
    fdt_sb_puts(b, "}");
}

int cmd_devices(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                         {"no-bandwidth", no_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int json = 0, bandwidth = 1, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'n': bandwidth = 0; break;
        case 'h': devices_usage(stdout); return EXIT_OK;
        default: devices_usage(stderr); return EXIT_USAGE;
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
    double gbs[FDT_MAX_DEVICES] = {0};
    for (int i = 0; bandwidth && i < p.ndevices; i++) {
        if (!json)
            fprintf(stderr, "measuring the copy bandwidth of %s %d (%s)...\n",
                    p.device[i].backend, p.device[i].index, p.device[i].name);
        if (fdt_device_copy_bandwidth(&p.device[i], (size_t)1 << 30, &gbs[i], &e))
            print_error("%s %d: copy bandwidth: %s", p.device[i].backend, p.device[i].index,
                        e.msg);
    }
    if (json) {
        fdt_sb b;
        fdt_sb_init(&b);
        fdt_sb_puts(&b, "{");
        json_kv_int(&b, "schema", FDT_JSON_SCHEMA_VERSION, 1);
        fdt_sb_puts(&b, "\"backends\": [");
        for (int i = 0; i < p.nbackends; i++) {
            fdt_sb_puts(&b, i ? ", {" : "{");
            json_kv_str(&b, "name", p.backend[i].name, 1);
            json_kv_int(&b, "available", p.backend[i].available, 1);
            json_kv_int(&b, "devices", p.backend[i].count, 1);
            json_kv_str(&b, "compiler", p.backend[i].compiler, 1);
            json_kv_str(&b, "message", p.backend[i].message, 0);
            fdt_sb_puts(&b, "}");
        }
        fdt_sb_puts(&b, "], \"devices\": [");
        for (int i = 0; i < p.ndevices; i++) {
            if (i)
                fdt_sb_puts(&b, ", ");
            json_device(&b, &p.device[i], gbs[i]);
        }
        fdt_sb_puts(&b, "]}\n");
        fputs(fdt_sb_str(&b), stdout);
        fdt_sb_free(&b);
        return EXIT_OK;
    }
    if (p.ndevices == 0) {
        printf("No GPU is visible. Backends tried:\n");
        for (int i = 0; i < p.nbackends; i++)
            printf("  %-5s %s (compiler: %s)\n", p.backend[i].name,
                   p.backend[i].message[0] ? p.backend[i].message : "no device",
                   p.backend[i].compiler);
        if (p.nbackends == 0)
            printf("  none: this fdtune was built without GPU backends\n");
        return EXIT_OK;
    }
    static const char *const hdr[] = {"#", "backend", "name", "arch", "CUs", "memory", "L2",
                                      "copy GB/s", "driver", "compiler", "uuid"};
    table t;
    table_init(&t, 11, hdr);
    t.right[0] = t.right[4] = t.right[5] = t.right[6] = t.right[7] = 1;
    for (int i = 0; i < p.ndevices; i++) {
        const fdt_device *d = &p.device[i];
        table_add(&t, "%d", i);
        table_add(&t, "%s:%d", d->backend, d->index);
        table_add(&t, "%s", d->name);
        table_add(&t, "%s", d->arch);
        table_add(&t, "%d", d->compute_units);
        table_add(&t, "%.1f GiB", d->mem_bytes / 1073741824.0);
        table_add(&t, "%.0f MiB", d->l2_bytes / 1048576.0);
        table_add(&t, gbs[i] > 0 ? "%.0f" : "-", gbs[i]);
        table_add(&t, "%s", d->driver_version);
        table_add(&t, "%s", d->compiler_version);
        table_add(&t, "%s", d->uuid);
    }
    table_print(&t, stdout);
    table_free(&t);
    for (int i = 0; i < p.nbackends; i++)
        if (p.backend[i].message[0])
            printf("(%s: %s)\n", p.backend[i].name, p.backend[i].message);
    return EXIT_OK;
}
