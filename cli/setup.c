/* What several commands share around the library calls that do their work: the exit status
 * of a library outcome, the explanation when no GPU is visible (each backend tried and why
 * it found nothing), and the tuning database opened for reading, with a hint when there is
 * none yet. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_eval.h"

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

int open_db_readonly(const char *path, fdt_db **db)
{
    char def[4096];
    fdt_err e;
    if (!path) {
        if (fdt_db_default_path(def, sizeof def, &e)) {
            print_error("%s", e.msg);
            return -1;
        }
        path = def;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        print_error("no tuning database at %s: run fdtune --gpu NAME --R N --grid G first "
                    "(or name one with --db PATH or FDTUNE_DB)", path);
        return -1;
    }
    if (fdt_db_open(path, FDT_DB_READONLY, db, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    return 0;
}
