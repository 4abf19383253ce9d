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
    {"hybrid", cmd_hybrid, "plan one time step on a GPU and its host CPU (measured rates)"},
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
    fprintf(f, "\n'fdtune <command> --help' (or -h, or 'fdtune help <command>') describes each\n"
               "command.\n");
    print_exit_statuses(f);
    fprintf(f, "environment: NO_COLOR, FDTUNE_CACHE (compile cache directory, empty: off),\n"
               "FDTUNE_DB (tuning database), FDTUNE_SYSTEM_DB (system database, empty: off),\n"
               "FDTUNE_RECIPES (recipe directories, ':'), CUDA_HOME (where NVRTC is looked for),\n"
               "FDTUNE_CLANG (the offline clang for AMD targets hiprtc cannot compile),\n"
               "FDTUNE_HIPRTC_OPTIONS (extra hiprtc options).\n");
}

/* Each backend's compiler, then the files its libraries were loaded from and the versions
 * they report (found in a child: the HIP runtime starts when asked its version). */
static void version(void)
{
    printf("fdtune %s (generator %s)\n", FDTUNE_VERSION, fdt_gen_fingerprint());
    fdt_rt_lib libs[FDT_RT_MAX_LIBS];
    int nlibs = 0;
    fdt_err le;
    if (fdt_rt_backend_count() && fdt_rt_libraries(libs, FDT_RT_MAX_LIBS, &nlibs, &le))
        printf("libraries: unknown (%s)\n", le.msg);
    for (int i = 0; i < fdt_rt_backend_count(); i++) {
        const fdt_rt_backend *b = fdt_rt_backend_at(i);
        char ver[128];
        fdt_err e;
        if (b->compiler_version(ver, sizeof ver, &e))
            printf("backend %s: compiler unavailable (%s)\n", b->name, e.msg);
        else
            printf("backend %s: %s\n", b->name, ver);
        for (int k = 0; k < nlibs; k++) {
            const fdt_rt_lib *l = &libs[k];
            if (strcmp(l->backend, b->name))
                continue;
            if (l->path[0])
                printf("  %-11s %-24s %s%s%s%s\n", l->role, l->version, l->path,
                       l->note[0] ? " (" : "", l->note, l->note[0] ? ")" : "");
            else
                printf("  %-11s not loaded: %s\n", l->role, l->note);
        }
    }
    if (fdt_rt_backend_count() == 0)
        printf("backends: none compiled in\n");
    printf("SQLite %s\n%s\n", sqlite3_libversion(), LUA_RELEASE);
}

/* fdtune help [CMD] [--json]: the main usage, or CMD --help (cli_output_begin saw --json). */
static int help(int argc, char **argv)
{
    const char *cmd = NULL;
    for (int i = 2; i < argc && !cmd; i++)
        if (strcmp(argv[i], "--json"))
            cmd = argv[i];
    if (!cmd)
        return print_help("", usage);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name)) {
            char flag[] = "--help", *args[] = {(char *)cmd, flag, NULL};
            return commands[i].fn(2, args);
        }
    print_error("help: unknown command '%s' (see 'fdtune --help')", cmd);
    return EXIT_USAGE;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return help(1, argv);
    if (!strcmp(cmd, "help"))
        return help(argc, argv);
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

int main(int argc, char **argv)
{
    cli_output_begin(argc, argv);
    int status = cli_output_status(run(argc, argv));
    cli_output_end();
    return status;
}
