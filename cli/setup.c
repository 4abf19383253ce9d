/* What several commands share around the library calls that do their work: the exit status
 * of a library outcome, the explanation when no GPU is visible (each backend tried and why
 * it found nothing), --gpu auto resolved to the visible GPU and --cpu auto to the host CPU
 * for the commands that read stored results, and the tuning database opened for reading, with a hint when there is none yet;
 * for query and export, the user's database followed by the system database. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_session.h"

#include <errno.h>
#include <sys/stat.h>

int exit_status(fdt_status st)
{
    static const int code[] = {
        [FDT_STATUS_OK] = EXIT_OK,         [FDT_STATUS_FAILED] = EXIT_FAIL,
        [FDT_STATUS_USAGE] = EXIT_USAGE,   [FDT_STATUS_NO_GPU] = EXIT_NO_GPU,
        [FDT_STATUS_ERROR] = EXIT_ERROR,   [FDT_STATUS_BUSY] = EXIT_BUSY,
        [FDT_STATUS_INTERRUPTED] = EXIT_INTERRUPTED,
    };
    return (unsigned)st < sizeof code / sizeof code[0] ? code[st] : EXIT_ERROR;
}

void print_no_gpu(const fdt_probe *p, const char *what, const char *hint)
{
    fdt_sb why;
    fdt_sb_init(&why);
    for (int i = 0; i < p->nbackends; i++)
        fdt_sb_printf(&why, "\n  %s: %s", p->backend[i].name,
                      p->backend[i].message[0] ? p->backend[i].message : "no device");
    if (!p->nbackends)
        fdt_sb_puts(&why, " none compiled in");
    print_error("no GPU is visible, so %s. Backends tried:%s\n  %s", what, fdt_sb_str(&why),
                hint);
    fdt_sb_free(&why);
}

int resolve_gpu_auto(const char **gpu, const fdt_catalogue *cat, fdt_device *dev)
{
    fdt_probe p;
    fdt_err e;
    fdt_status st = fdt_session_resolve_auto(gpu, cat, NULL, &p, dev, &e);
    if (st == FDT_STATUS_NO_GPU)
        print_no_gpu(&p, "--gpu auto names no device",
                     "Name the GPU instead, e.g. --gpu H100 or --gpu gfx90a; for the host "
                     "CPU, --cpu auto.");
    else if (st != FDT_STATUS_OK)
        print_error("--gpu auto: %s", e.msg);
    else if (dev->name[0] || dev->arch[0])
        print_note("--gpu auto: the visible GPU, %s (%s, %d CUs)", dev->name, dev->arch,
                   dev->compute_units);
    return exit_status(st);
}

int resolve_cpu_auto(const char **cpu, fdt_device *dev)
{
    fdt_probe p;
    fdt_err e;
    fdt_status st = fdt_session_resolve_cpu(cpu, NULL, &p, dev, &e);
    if (st != FDT_STATUS_OK)
        print_error("%s", e.msg);
    else if (dev->name[0])
        print_note("--cpu auto: the host CPU, %s (%s, %d cores)", dev->name, dev->arch,
                   dev->compute_units);
    return exit_status(st);
}

int host_cpu(const char *cpu, fdt_device *dev)
{
    fdt_probe p;
    fdt_err e;
    fdt_status st = fdt_session_host_cpu(cpu, NULL, &p, dev, &e);
    if (st != FDT_STATUS_OK)
        print_error("%s", e.msg);
    return exit_status(st);
}

/* The user's database path: path, else the default location. */
static const char *user_path(const char *path, char *buf, size_t n)
{
    fdt_err e;
    if (path)
        return path;
    if (fdt_db_default_path(buf, n, &e)) {
        print_error("%s", e.msg);
        return NULL;
    }
    return buf;
}

static int missing(const char *path)
{
    struct stat sb;
    return stat(path, &sb) != 0 && errno == ENOENT;
}

static void no_database(const char *path)
{
    print_error("no tuning database at %s: run fdtune --gpu NAME --R N --grid G first "
                "(or name one with --db PATH or FDTUNE_DB)", path);
}

int open_db_readonly(const char *path, fdt_db **db)
{
    char def[4096];
    fdt_err e;
    if (!(path = user_path(path, def, sizeof def)))
        return -1;
    if (missing(path)) {
        no_database(path);
        return -1;
    }
    if (fdt_db_open(path, FDT_DB_READONLY, db, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    return 0;
}

int open_db_store(const char *path, fdt_db **db)
{
    char def[4096];
    fdt_err e;
    const char *p = user_path(path, def, sizeof def);
    *db = NULL;
    if (!p)
        return -1;
    if (!path && missing(p))
        return 0;
    if (fdt_db_open(p, path ? FDT_DB_CREATE : FDT_DB_READWRITE, db, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    return 0;
}

int open_dbs(const char *path, int no_system, fdt_db **dbs, size_t *n)
{
    char def[4096];
    const char *p = user_path(path, def, sizeof def);
    fdt_err e;
    *n = 0;
    if (!p)
        return -1;
    fdt_db *sys = NULL;
    if (!no_system && fdt_db_open_system(&sys, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    /* A fresh install has no database of its own yet; the system database answers then,
     * unless --db named a file that is not there. */
    if (missing(p) && sys && !path) {
        dbs[(*n)++] = sys;
        return 0;
    }
    if (open_db_readonly(p, &dbs[0])) {
        fdt_db_close(sys);
        return -1;
    }
    *n = 1;
    if (sys)
        dbs[(*n)++] = sys;
    return 0;
}

void close_dbs(fdt_db **dbs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fdt_db_close(dbs[i]);
}
