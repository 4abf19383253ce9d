/* Argument parsing shared by subcommands: the problem options (one problem, or lists of
 * them), checked integers and durations. */
#include "cli.h"
#include "fdt_tune.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_OP = 1000, OPT_R, OPT_PREC, OPT_GRID };

void problem_args_init(problem_args *a)
{
    memset(a, 0, sizeof *a);
    a->p.op = FDT_OP_LAP;
    a->p.R = 4;
    a->p.prec = FDT_F32;
    a->p.nx = a->p.ny = a->p.nz = 512;
}

int parse_int_arg(const char *opt, const char *s, long min, long max, long *out)
{
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno == ERANGE) {
        print_error("%s '%s': expected an integer", opt, s);
        return -1;
    }
    if (v < min || v > max) {
        print_error("%s %ld: out of range (%ld..%ld)", opt, v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int problem_args_take(problem_args *a, int opt, const char *arg)
{
    fdt_err e;
    long v;
    int64_t d[3];
    switch (opt) {
    case 'o':
        if (fdt_op_parse(arg, &a->p.op, &e))
            break;
        a->have_op = 1;
        return 1;
    case 'R':
        errno = 0;
        {
            char *end;
            v = strtol(arg, &end, 10);
            if (!*arg || *end || errno) {
                fdt_err_set(&e, "--R '%s': expected an integer", arg);
                break;
            }
        }
        if (v < FDT_R_MIN || v > FDT_R_MAX) {
            fdt_err_set(&e, "--R %ld: out of range (%d..%d; the order of accuracy is 2R)", v,
                        FDT_R_MIN, FDT_R_MAX);
            break;
        }
        a->p.R = (int)v;
        a->have_R = 1;
        return 1;
    case 'p':
        if (fdt_prec_parse(arg, &a->p.prec, &e))
            break;
        return 1;
    case 'g':
        if (fdt_grid_parse(arg, d, &e))
            break;
        a->p.nx = d[0];
        a->p.ny = d[1];
        a->p.nz = d[2];
        a->have_grid = 1;
        return 1;
    default:
        return 0;
    }
    print_error("%s", e.msg);
    return -1;
}

int parse_duration(const char *s, double *seconds)
{
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno || v <= 0)
        return -1;
    double unit = 1;
    if (!strcmp(end, "") || !strcmp(end, "s"))
        unit = 1;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        unit = 60;
    else if (!strcmp(end, "h"))
        unit = 3600;
    else if (!strcmp(end, "d"))
        unit = 86400;
    else
        return -1;
    *seconds = v * unit;
    return 0;
}

int problem_list_take(problem_args *pa, fdt_tune_request *rq, int opt, const char *arg)
{
    if (opt != 'o' && opt != 'R' && opt != 'p' && opt != 'g')
        return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    fdt_err e;
    int n = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
        fdt_op op;
        if (opt == 'o') {
            if (fdt_op_parse(tok, &op, &e)) {
                print_error("--op: %s", e.msg);
                return -1;
            }
            rq->ops |= 1u << op;
            continue;
        }
        if (problem_args_take(pa, opt, tok) < 0)
            return -1;
        int64_t g[3] = {pa->p.nx, pa->p.ny, pa->p.nz};
        int dup = opt != 'g';
        for (int k = 0; k < rq->ngrids && !dup; k++)
            dup = !memcmp(rq->grid[k], g, sizeof g);
        if (opt == 'R')
            rq->Rs |= 1u << pa->p.R;
        else if (opt == 'p')
            rq->precs |= 1u << pa->p.prec;
        else if (!dup && rq->ngrids == FDT_TUNE_MAX_GRIDS) {
            print_error("--grid: at most %d grids", FDT_TUNE_MAX_GRIDS);
            return -1;
        } else if (!dup) {
            memcpy(rq->grid[rq->ngrids++], g, sizeof g);
        }
    }
    if (n == 0) { /* "" or "," */
        print_error("--%s '%s': expected a value", opt == 'o' ? "op" : opt == 'R' ? "R"
                                                   : opt == 'p' ? "precision" : "grid", arg);
        return -1;
    }
    return 1;
}
