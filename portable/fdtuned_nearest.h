/* ---- fdtune portable: the nearest tuned result (plain C99 or C++11, no includes) ---------
 * Which tuned result answers for a device and a grid it may never have been tuned on: the
 * one rule of `fdtune query best --nearest` (fdt_db_nearest) and of the selection in every
 * exported header, which `fdtune export` builds by copying this file verbatim. Needs
 * fdtuned_model.h before it.
 *
 * Candidates: for each device model and tuned grid of the operator, radius and precision,
 * the one tuned result that ranks first (the fastest), taken only when it has the requested
 * base architecture and its config can run the requested grid (fdtuned_fit). Among them the
 * first by: rung (same model and grid; same model, other grid; other model of the same
 * architecture; then, below every measured result, a prediction of fdtune's model for a
 * device model of the architecture that nothing was measured on), |log volume ratio|,
 * |log xy-plane ratio|, |compute-unit difference|, the faster median, then the tuned grid
 * (nx, ny, nz) and the result's id. The ratios are compared as max/min, which orders like
 * |log| without a math library. */
#ifndef FDTUNED_NEAREST_V2
#define FDTUNED_NEAREST_V2

#ifndef FDTUNED_MODEL_V1
#error "fdtuned_nearest.h needs fdtuned_model.h before it"
#endif

/* A tuned result, as the ranking sees it. */
typedef struct fdtuned_result {
    const char *name, *arch; /* the device model it was tuned on (with cus) */
    int cus;
    long long nx, ny, nz;    /* its grid */
    double ms;               /* its median time on that grid (predicted: -1, unknown) */
    long long id;            /* unique among the candidates (fdtune: the evaluation id) */
    int predicted;           /* 1: fdtune's model's top-ranked config, nothing measured */
} fdtuned_result;

/* What is asked: a device model and a grid. */
typedef struct fdtuned_request {
    const char *name, *arch;
    int cus;
    long long nx, ny, nz;
} fdtuned_request;

enum {
    FDTUNED_RUNG_EXACT = 0, /* this device model, this grid */
    FDTUNED_RUNG_GRID = 1,  /* this device model, another grid */
    FDTUNED_RUNG_ARCH = 2,  /* another device model of the same base architecture */
    FDTUNED_RUNG_MODEL = 3, /* predicted, not measured: the model's answer for a device model
                               of the same base architecture */
    FDTUNED_RUNG_NONE = 4   /* another architecture: not a candidate */
};

/* The rung at which result r could answer request q. */
static inline int fdtuned_rung(const fdtuned_request *q, const fdtuned_result *r)
{
    if (!fdtuned_same_arch(q->arch, r->arch))
        return FDTUNED_RUNG_NONE;
    if (r->predicted)
        return FDTUNED_RUNG_MODEL;
    if (!fdtuned_same_model(q->name, q->arch, q->cus, r->name, r->arch, r->cus))
        return FDTUNED_RUNG_ARCH;
    return q->nx == r->nx && q->ny == r->ny && q->nz == r->nz ? FDTUNED_RUNG_EXACT
                                                              : FDTUNED_RUNG_GRID;
}

/* max(a, b) / min(a, b) of two positive numbers. */
static inline double fdtuned_ratio_(double a, double b)
{
    return a > b ? a / b : b / a;
}

static inline int fdtuned_cmp_(double a, double b)
{
    return a < b ? -1 : a > b ? 1 : 0;
}

/* The order of results that are otherwise equal: the faster, then the grid, then the id. */
static inline int fdtuned_tiebreak(const fdtuned_result *a, const fdtuned_result *b)
{
    int c = fdtuned_cmp_(a->ms, b->ms);
    if (!c)
        c = fdtuned_cmp_((double)a->nx, (double)b->nx);
    if (!c)
        c = fdtuned_cmp_((double)a->ny, (double)b->ny);
    if (!c)
        c = fdtuned_cmp_((double)a->nz, (double)b->nz);
    if (!c)
        c = a->id < b->id ? -1 : a->id > b->id ? 1 : 0;
    return c;
}

/* 1 when a and b were tuned (or both predicted) on one device model and one grid: of such
 * results only the first by fdtuned_tiebreak is a candidate. */
static inline int fdtuned_same_slot(const fdtuned_result *a, const fdtuned_result *b)
{
    return a->predicted == b->predicted &&
           fdtuned_same_model(a->name, a->arch, a->cus, b->name, b->arch, b->cus) &&
           a->nx == b->nx && a->ny == b->ny && a->nz == b->nz;
}

/* Negative when a answers request q before b, positive when after, 0 for the same result. */
static inline int fdtuned_rank(const fdtuned_request *q, const fdtuned_result *a,
                               const fdtuned_result *b)
{
    double qv = (double)q->nx * (double)q->ny * (double)q->nz;
    double qp = (double)q->nx * (double)q->ny;
    long long ca = a->cus - q->cus, cb = b->cus - q->cus;
    int c = fdtuned_rung(q, a) - fdtuned_rung(q, b);
    if (!c)
        c = fdtuned_cmp_(fdtuned_ratio_((double)a->nx * (double)a->ny * (double)a->nz, qv),
                         fdtuned_ratio_((double)b->nx * (double)b->ny * (double)b->nz, qv));
    if (!c)
        c = fdtuned_cmp_(fdtuned_ratio_((double)a->nx * (double)a->ny, qp),
                         fdtuned_ratio_((double)b->nx * (double)b->ny, qp));
    if (!c)
        c = fdtuned_cmp_((double)(ca < 0 ? -ca : ca), (double)(cb < 0 ? -cb : cb));
    if (!c)
        c = fdtuned_tiebreak(a, b);
    return c;
}

#endif /* FDTUNED_NEAREST_V2 */
