/* Argument parsing shared by subcommands: list values (one splitter for every option that
 * takes a list), the problem options (--op, --R, --precision, --grid: lists in every
 * command, one problem where a command takes one; --absorb, dwave's layer), checked integers
 * and durations. Nothing
 * here truncates a value: a list of any length is split whole, and what cannot be taken is
 * refused naming the option. */
#include "cli.h"
#include "fdt_tune.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PROBLEM_MAX_GRIDS <= FDT_TUNE_MAX_GRIDS, "a tuning request holds every grid");

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

int list_each(const char *opt, const char *arg, int (*take)(void *ctx, const char *item),
              void *ctx)
{
    if (!*arg) {
        print_error("%s '': expected a value", opt);
        return -1;
    }
    char *copy = strdup(arg);
    if (!copy) {
        print_error("%s: out of memory", opt);
        return -1;
    }
    int rc = 0;
    for (char *s = copy; rc == 0; s++) {
        size_t n = strcspn(s, ",");
        if (n == 0) {
            print_error("%s '%s': an empty item in the list (a comma too many?)", opt, arg);
            rc = -1;
            break;
        }
        int last = s[n] == 0;
        s[n] = 0;
        rc = take(ctx, s);
        s += n;
        if (last)
            break;
    }
    free(copy);
    return rc;
}

/* One item of a problem option into a. */
typedef struct problem_item {
    problem_args *a;
    int opt;
} problem_item;

static int take_R(problem_args *a, const char *s)
{
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno) {
        print_error("--R '%s': expected an integer", s);
        return -1;
    }
    if (v < FDT_R_MIN || v > FDT_R_MAX) {
        print_error("--R %ld: out of range (%d..%d; the order of accuracy is 2R)", v, FDT_R_MIN,
                    FDT_R_MAX);
        return -1;
    }
    a->p.R = (int)v;
    a->Rs |= 1u << v;
    a->have_R = 1;
    return 0;
}

static int take_grid(problem_args *a, const char *s)
{
    int64_t g[3];
    fdt_err e;
    if (fdt_grid_parse(s, g, &e)) {
        print_error("--grid: %s", e.msg);
        return -1;
    }
    a->p.nx = g[0];
    a->p.ny = g[1];
    a->p.nz = g[2];
    a->have_grid = 1;
    for (int k = 0; k < a->ngrids; k++)
        if (!memcmp(a->grid[k], g, sizeof g))
            return 0; /* a grid given twice counts once */
    if (a->ngrids == PROBLEM_MAX_GRIDS) {
        print_error("--grid: at most %d grids", PROBLEM_MAX_GRIDS);
        return -1;
    }
    memcpy(a->grid[a->ngrids++], g, sizeof g);
    return 0;
}

static int take_problem_item(void *ctx, const char *s)
{
    problem_item *it = ctx;
    problem_args *a = it->a;
    fdt_err e;
    switch (it->opt) {
    case 'o':
        if (fdt_op_parse(s, &a->p.op, &e))
            break;
        a->ops |= 1u << a->p.op;
        a->have_op = 1;
        return 0;
    case 'p':
        if (fdt_prec_parse(s, &a->p.prec, &e))
            break;
        a->precs |= 1u << a->p.prec;
        a->have_prec = 1;
        return 0;
    case 'R': return take_R(a, s);
    default: return take_grid(a, s);
    }
    print_error("--%s: %s", it->opt == 'o' ? "op" : "precision", e.msg);
    return -1;
}

/* --absorb W[:S], checked alone (the grid against W later, by fdt_problem_check). */
static int take_absorb(problem_args *a, const char *arg)
{
    fdt_problem layer = {FDT_OP_DWAVE, 0, FDT_F32, 0, 0, 0};
    fdt_err e;
    if (fdt_absorb_parse(arg, &layer, &e)) {
        print_error("--absorb: %s", e.msg);
        return -1;
    }
    a->absorb_w = layer.absorb_w;
    a->absorb_s = layer.absorb_s;
    a->have_absorb = 1;
    return 1;
}

int problem_args_take(problem_args *a, int opt, const char *arg)
{
    if (opt == OPT_ABSORB)
        return take_absorb(a, arg);
    static const struct {
        int opt;
        const char *name;
    } names[] = {{'o', "--op"}, {'R', "--R"}, {'p', "--precision"}, {'g', "--grid"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (opt == names[i].opt) {
            problem_item it = {a, opt};
            return list_each(names[i].name, arg, take_problem_item, &it) ? -1 : 1;
        }
    return 0;
}

int problem_args_done(problem_args *a)
{
    int dwave = (a->ops & (1u << FDT_OP_DWAVE)) != 0;
    if (dwave && !a->have_absorb) {
        print_error("--op dwave needs --absorb W[:S]: the absorbing layer's width W in grid "
                    "points on each face and its strength S = eta_max*dt (default %g)",
                    FDT_ABSORB_S_DEFAULT);
        return -1;
    }
    if (a->have_absorb && !dwave) {
        print_error("--absorb: only dwave has an absorbing layer; give --op dwave");
        return -1;
    }
    problem_args_layer(a, a->p.op, &a->p);
    return 0;
}

void problem_args_layer(const problem_args *a, fdt_op op, fdt_problem *p)
{
    int dwave = op == FDT_OP_DWAVE;
    p->absorb_w = dwave ? a->absorb_w : 0;
    p->absorb_s = dwave ? a->absorb_s : 0;
}

int problem_args_one(const problem_args *a, const char *cmd)
{
    const char *opt = __builtin_popcount(a->ops) > 1     ? "--op"
                      : __builtin_popcount(a->Rs) > 1    ? "--R"
                      : __builtin_popcount(a->precs) > 1 ? "--precision"
                      : a->ngrids > 1                    ? "--grid"
                                                         : NULL;
    if (!opt)
        return 0;
    print_error("%s takes one problem: give %s one value, not a list", cmd, opt);
    return -1;
}

void problem_args_request(const problem_args *pa, fdt_tune_request *rq)
{
    rq->p = pa->p;
    rq->p.absorb_w = pa->absorb_w; /* dwave's, whichever operator p is */
    rq->p.absorb_s = pa->absorb_s;
    rq->ops = pa->ops;
    rq->Rs = pa->Rs;
    rq->precs = pa->precs;
    rq->ngrids = pa->ngrids;
    memcpy(rq->grid, pa->grid, sizeof pa->grid);
}

/* The longest duration any option takes: one year. Longer ones are no limit a tune or a
 * retune could mean, and every consumer (deadlines, time_t cutoffs, the plan's JSON) holds
 * it exactly. */
#define DURATION_MAX_S (365.0 * 86400)

int parse_duration(const char *opt, const char *s, double *seconds)
{
    static const struct {
        const char *unit;
        double s;
    } units[] = {{"", 1}, {"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400}};
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    int range = errno == ERANGE;
    double unit = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0] && end != s; i++)
        if (!strcmp(end, units[i].unit))
            unit = units[i].s;
    if (end == s || !unit || strpbrk(s, "xXpP")) /* no hexadecimal forms */
        print_error("%s '%s': expected a duration such as 90s, 10m, 2h or 7d", opt, s);
    else if (isnan(v))
        print_error("%s '%s': not a number; expected a duration such as 90s, 10m, 2h or 7d",
                    opt, s);
    else if (isinf(v) && !range)
        print_error("%s '%s': not a finite duration; give one of at most 365d", opt, s);
    else if (range && fabs(v) < 1)
        print_error("%s '%s': too small to be a duration", opt, s);
    else if (v <= 0)
        print_error("%s '%s': a duration must be positive", opt, s);
    else if (!(v * unit <= DURATION_MAX_S))
        print_error("%s '%s': longer than a year; durations are at most 365d", opt, s);
    else {
        *seconds = v * unit;
        return 0;
    }
    return -1;
}

int parse_percent_arg(const char *opt, const char *s, double *frac)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || (*end && strcmp(end, "%")) || !(v > 0) || v > 100 || strpbrk(s, "xXpP")) {
        print_error("%s '%s': expected a percentage above 0 and at most 100, e.g. 5%%", opt, s);
        return -1;
    }
    *frac = v / 100;
    return 0;
}
