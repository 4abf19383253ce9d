/* fdtune's entry point: global options and dispatch to one file per subcommand. */
#include "cli.h"
#include "fdt_eval.h"
#include "fdt_rt.h"

#include <lua.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#ifndef FDTUNE_VERSION
#define FDTUNE_VERSION "0.0.0"
#endif

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"tune", cmd_tune, "search the best configs of problems on a GPU (the default command)"},
    {"query", cmd_query, "best configs, runs, history of the tuning database"},
    {"export", cmd_export, "write a tuned header (or JSON) from the database"},
    {"plan", cmd_plan, "expand a request into tasks for a job array (SLURM) or a node"},
    {"retune", cmd_retune, "re-measure stored bests, detect regressions, re-search (nightly)"},
    {"gen", cmd_gen, "print the HIP source of one candidate (and compile it)"},
    {"bench", cmd_bench, "run, verify and time candidates on a GPU"},
    {"devices", cmd_devices, "list the visible GPUs with identity and copy bandwidth"},
    {"db", cmd_db, "merge tuning databases (cluster shards), check one"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: fdtune [tune] --gpu NAME --R N --grid G [options]\n"
               "       fdtune <command> [options]\n"
               "       fdtune --version | --help\n\n"
               "fdtune generates, verifies and times high-order finite-difference stencil\n"
               "kernels (HIP source, compiled at run time by hiprtc on AMD and NVRTC on NVIDIA).\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'fdtune <command> --help' describes each command.\n"
               "exit status: 0 success, 1 a check failed, 2 usage error, 3 no GPU visible,\n"
               "4 operational error (device, compiler, database, disk).\n"
               "environment: NO_COLOR, FDTUNE_CACHE (compile cache directory, empty: off),\n"
               "FDTUNE_DB (tuning database), FDTUNE_SYSTEM_DB (system database, empty: off),\n"
               "FDTUNE_RECIPES (recipe directories, ':'), CUDA_HOME (where NVRTC is looked for),\n"
               "FDTUNE_CLANG (the offline clang for AMD targets hiprtc cannot compile),\n"
               "FDTUNE_HIPRTC_OPTIONS (extra hiprtc options).\n");
}

static void version(void)
{
    printf("fdtune %s (generator %s)\n", FDTUNE_VERSION, fdt_gen_fingerprint());
    for (int i = 0; i < fdt_rt_backend_count(); i++) {
        const fdt_rt_backend *b = fdt_rt_backend_at(i);
        char ver[64];
        fdt_err e;
        if (b->compiler_version(ver, sizeof ver, &e))
            printf("backend %s: compiler unavailable (%s)\n", b->name, e.msg);
        else
            printf("backend %s: %s\n", b->name, ver);
    }
    if (fdt_rt_backend_count() == 0)
        printf("backends: none compiled in\n");
    printf("SQLite %s\n%s\n", sqlite3_libversion(), LUA_RELEASE);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        version();
        return EXIT_OK;
    }
    if (cmd[0] == '-') /* `fdtune --gpu H100 --R 4 --grid 1024^3`: tuning is the main job */
        return cmd_tune(argc, argv);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    print_error("unknown command '%s' (see 'fdtune --help')", cmd);
    return EXIT_USAGE;
}
