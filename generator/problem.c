/* The problem's vocabulary: operator names, precision, grid parsing, radii per axis and the
 * text key. Grid text is user input, so every malformed, zero, negative or overflowing form
 * gets a precise message. (Whether a whole problem is valid, arrays included, is checked
 * with its layout: fdt_problem_check in layout.c.) */
#include "fdt_gen.h"
#include "fdt_emit.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[FDT_OP_COUNT] = {"d2x", "d2y", "d2z", "lap", "wave",
                                                      "dwave"};

const char *fdt_op_name(fdt_op op) { return (unsigned)op < FDT_OP_COUNT ? op_names[op] : "?"; }

int fdt_op_parse(const char *s, fdt_op *op, fdt_err *e)
{
    for (int i = 0; i < FDT_OP_COUNT; i++)
        if (strcmp(s, op_names[i]) == 0) {
            *op = (fdt_op)i;
            return 0;
        }
    return fdt_err_set(e, "unknown operator '%s' (expected d2x, d2y, d2z, lap, wave or dwave)", s);
}

const char *fdt_prec_name(fdt_prec p) { return p == FDT_F64 ? "f64" : "f32"; }
size_t fdt_prec_size(fdt_prec p) { return p == FDT_F64 ? 8 : 4; }

int fdt_prec_parse(const char *s, fdt_prec *p, fdt_err *e)
{
    if (!strcmp(s, "f32") || !strcmp(s, "float") || !strcmp(s, "single"))
        *p = FDT_F32;
    else if (!strcmp(s, "f64") || !strcmp(s, "double"))
        *p = FDT_F64;
    else
        return fdt_err_set(e, "unknown precision '%s' (expected f32 or f64)", s);
    return 0;
}

void fdt_op_radii(fdt_op op, int R, int r[3])
{
    int all = op == FDT_OP_LAP || fdt_op_is_step(op);
    r[0] = (op == FDT_OP_D2X || all) ? R : 0;
    r[1] = (op == FDT_OP_D2Y || all) ? R : 0;
    r[2] = (op == FDT_OP_D2Z || all) ? R : 0;
}

int fdt_op_is_step(fdt_op op) { return op == FDT_OP_WAVE || op == FDT_OP_DWAVE; }

int fdt_op_ninputs(fdt_op op) { return fdt_op_is_step(op) ? 3 : 1; }

int fdt_absorb_parse(const char *s, fdt_problem *p, fdt_err *e)
{
    if (!s || !*s)
        return fdt_err_set(e, "absorbing layer: empty (forms: W or W:S)");
    errno = 0;
    char *end;
    long w = strtol(s, &end, 10);
    if (end == s || errno == ERANGE || w < 1 || w > FDT_DIM_MAX / 2)
        return fdt_err_set(e, "absorbing layer '%s': the width W must be an integer from 1 to "
                              "%lld points", s, (long long)(FDT_DIM_MAX / 2));
    double strength = FDT_ABSORB_S_DEFAULT;
    if (*end == ':') {
        const char *t = end + 1;
        errno = 0;
        strength = strtod(t, &end);
        if (end == t || errno == ERANGE || !(strength > 0) || strength > FDT_ABSORB_S_MAX)
            return fdt_err_set(e, "absorbing layer '%s': the strength S must be a number in "
                                  "(0, %g]", s, FDT_ABSORB_S_MAX);
    }
    if (*end)
        return fdt_err_set(e, "absorbing layer '%s': unexpected text '%s' (forms: W or W:S)", s,
                           end);
    p->absorb_w = (int)w;
    p->absorb_s = strength;
    return 0;
}

/* One positive integer at *s; advances *s. */
static int parse_dim(const char **s, const char *whole, int64_t *out, fdt_err *e)
{
    const char *p = *s;
    if (*p == '-' || *p == '+')
        return fdt_err_set(e, "grid '%s': dimensions must be positive integers", whole);
    if (!isdigit((unsigned char)*p))
        return fdt_err_set(e, "grid '%s': expected a number at '%s' (forms: N^3 or NXxNYxNZ)",
                           whole, p);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno == ERANGE || v > (unsigned long long)FDT_DIM_MAX)
        return fdt_err_set(e, "grid '%s': dimension %.*s is too large (at most %lld)", whole,
                           (int)(end - p), p, (long long)FDT_DIM_MAX);
    if (v == 0)
        return fdt_err_set(e, "grid '%s': dimensions must be at least 1", whole);
    *out = (int64_t)v;
    *s = end;
    return 0;
}

int fdt_grid_parse(const char *s, int64_t dims[3], fdt_err *e)
{
    if (!s || !*s)
        return fdt_err_set(e, "grid: empty (forms: N^3 or NXxNYxNZ)");
    const char *p = s;
    int64_t a;
    if (parse_dim(&p, s, &a, e))
        return -1;
    if (*p == '^') {
        if (strcmp(p, "^3") != 0)
            return fdt_err_set(e, "grid '%s': only the cube form N^3 is accepted with '^'", s);
        dims[0] = dims[1] = dims[2] = a;
        return 0;
    }
    dims[0] = a;
    for (int d = 1; d < 3; d++) {
        if (*p != 'x' && *p != 'X')
            return fdt_err_set(e, "grid '%s': expected 'x' at '%s' (forms: N^3 or NXxNYxNZ)", s,
                               *p ? p : "end of text");
        p++;
        if (parse_dim(&p, s, &dims[d], e))
            return -1;
    }
    if (*p)
        return fdt_err_set(e, "grid '%s': unexpected text '%s' after three dimensions", s, p);
    return 0;
}

void fdt_problem_format(const fdt_problem *p, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%s R=%d %s %lldx%lldx%lld", fdt_op_name(p->op), p->R,
                     fdt_prec_name(p->prec), (long long)p->nx, (long long)p->ny,
                     (long long)p->nz);
    if (p->op == FDT_OP_DWAVE && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " W=%d S=%g", p->absorb_w, p->absorb_s);
}

void fdt_problem_emit(fdt_emit *m, const fdt_problem *p)
{
    fdt_emit_str(m, "op", fdt_op_name(p->op));
    fdt_emit_int(m, "R", p->R);
    fdt_emit_str(m, "precision", fdt_prec_name(p->prec));
    fdt_emit_int(m, "nx", p->nx);
    fdt_emit_int(m, "ny", p->ny);
    fdt_emit_int(m, "nz", p->nz);
    if (p->op != FDT_OP_DWAVE)
        return;
    fdt_emit_int(m, "absorb_width", p->absorb_w);
    fdt_emit_real(m, "absorb_strength", p->absorb_s);
}
