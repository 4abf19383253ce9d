/* dwave's HIP kernels run on this CPU (no GPU): for each kernel family (direct, window, tile,
 * ring, stream), both damping forms (eta) and both forms of the rows (layer), the generated
 * source (NAME and NAME_int) is compiled by g++ with the host shim of tests/ring_host (one
 * thread per GPU thread, blocks one after another, __syncthreads a barrier) and launched over
 * the boxes of each deployment (complete, inout, sides) that fdt_gen_deploy gives, with the
 * box's pointers, extents, origin and hole, as a GPU worker launches them. Checked: every
 * interior point against the fp64 reference within fdt_tolerance_make's bound and the halo
 * untouched; each box alone writes exactly its points but its hole (the block skip of the
 * damped kernel); the three deployments' outputs bit for bit equal. Skips (77) when g++
 * cannot build C++20 threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt_gen.h"
#include "testutil.h"

enum { NX = 40, NY = 24, NZ = 20, W = 4 };
static const fdt_gen_target HIP = {FDT_DIALECT_HIP};
static const uint64_t SEED = 777;
static char dir[256];

/* The host harness: reads the inputs and the boxes, launches kern / kern_int per box. */
static const char harness[] =
    "#include <cstdio>\n#include <cstdlib>\n#include <string>\n#include <thread>\n"
    "#include <vector>\n#include \"hip/hip_runtime.h\"\n"
    "thread_local dim3 threadIdx;\ndim3 blockIdx, blockDim, gridDim;\n"
    "std::barrier<> *fdt_block_barrier;\nalignas(16) unsigned char fdt_dyn_shared[1 << 20];\n"
    "#include \"kernel.cu\"\n"
    "static std::vector<REAL> load(std::string p, size_t n)\n{\n"
    "    std::vector<REAL> v(n);\n    FILE *f = fopen(p.c_str(), \"rb\");\n"
    "    if (!f || fread(v.data(), sizeof(REAL), n, f) != n) exit(3);\n"
    "    fclose(f);\n    return v;\n}\n"
    "int main(int argc, char **argv)\n{\n"
    "    std::string d = argv[1];\n    size_t n = atol(argv[2]), neta = atol(argv[3]);\n"
    "    long off = atol(argv[4]), line = atol(argv[5]), slice = atol(argv[6]);\n"
    "    int si = atoi(argv[7]), sj = atoi(argv[8]), sk = atoi(argv[9]), nb = atoi(argv[10]);\n"
    "    auto in = load(d + \"/in.bin\", n), prev = load(d + \"/prev.bin\", n);\n"
    "    auto c2 = load(d + \"/c2.bin\", n), eta = load(d + \"/eta.bin\", neta);\n"
    "    auto out = load(d + \"/out.bin\", n);\n"
    "    for (int b = 0; b < nb; b++) {\n"
    "        int v[21];\n"
    "        for (int i = 0; i < 21; i++) v[i] = atoi(argv[11 + 21 * b + i]);\n"
    "        long o = off + v[1] + v[2] * line + v[3] * slice;\n"
    "        gridDim = {(unsigned)v[15], (unsigned)v[16], (unsigned)v[17]};\n"
    "        blockDim = {(unsigned)v[18], (unsigned)v[19], (unsigned)v[20]};\n"
    "        for (unsigned z = 0; z < gridDim.z; z++)\n"
    "            for (unsigned y = 0; y < gridDim.y; y++)\n"
    "                for (unsigned x = 0; x < gridDim.x; x++) {\n"
    "                    blockIdx = {x, y, z};\n"
    "                    std::barrier<> bar(v[18] * v[19] * v[20]);\n"
    "                    fdt_block_barrier = &bar;\n"
    "                    std::vector<std::thread> ts;\n"
    "                    for (int tz = 0; tz < v[20]; tz++)\n"
    "                        for (int ty = 0; ty < v[19]; ty++)\n"
    "                            for (int tx = 0; tx < v[18]; tx++)\n"
    "                                ts.emplace_back([&, tx, ty, tz] {\n"
    "                                    threadIdx = {(unsigned)tx, (unsigned)ty, "
    "(unsigned)tz};\n"
    "                                    (v[0] ? kern : kern_int)(out.data() + o, in.data() + "
    "o, prev.data() + o, c2.data() + o, eta.data(), v[4], v[5], v[6], v[1], v[2], v[3], v[7], "
    "v[8], v[9], v[10], v[11], v[12], v[13], v[14], (REAL)1, (REAL)0.5, (REAL)0.25, si, sj, "
    "sk, (REAL)0.75);\n"
    "                                });\n"
    "                    for (auto &t : ts) t.join();\n"
    "                }\n"
    "    }\n"
    "    FILE *f = fopen((d + \"/out.bin\").c_str(), \"wb\");\n"
    "    return f && fwrite(out.data(), sizeof(REAL), n, f) == n && !fclose(f) ? 0 : 1;\n}\n";

static void write_bytes(const char *name, const void *p, size_t n)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A shell command's status (0: it ran and succeeded). */
static int run(const char *cmd)
{
    return system(cmd);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/fdtune-test-dwave-host.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char cmd[800];
    snprintf(cmd, sizeof cmd, "printf '#include <barrier>\\nint main() { std::barrier<> b(1); "
                              "b.arrive_and_wait(); }\\n' > %s/probe.cpp && g++ -std=c++20 "
                              "-pthread %s/probe.cpp -o %s/probe >/dev/null 2>&1", dir, dir, dir);
    if (run(cmd)) {
        fprintf(stderr, "skip: g++ cannot build C++20 std::barrier programs\n");
        exit(77);
    }
    write_bytes("harness.cpp", harness, strlen(harness));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return run(cmd) ? -1 : 0;
}

/* The fill, in the precision: field f at padded (i, j, k) of layout l. */
static void fill(const fdt_problem *p, const fdt_layout *l, int field, void *a)
{
    for (int64_t k = 0; k < l->mz; k++)
        for (int64_t j = 0; j < l->my; j++)
            for (int64_t i = 0; i < l->mx; i++) {
                double v = fdt_input_value(SEED, field, i, j, k, p->prec);
                int64_t at = fdt_layout_index(l, i, j, k);
                if (p->prec == FDT_F32)
                    ((float *)a)[at] = (float)v;
                else
                    ((double *)a)[at] = v;
            }
}

typedef struct host_inputs {
    const fdt_problem *p;
    const fdt_layout *l;
    void *in[3];
} host_inputs;

static double input(void *ctx, int field, int64_t i, int64_t j, int64_t k)
{
    host_inputs *h = ctx;
    int64_t at = fdt_layout_index(h->l, i, j, k);
    return h->p->prec == FDT_F32 ? ((float *)h->in[field])[at] : ((double *)h->in[field])[at];
}

/* Runs the compiled harness over boxes b[0..nb) (geometries g) on poisoned output; the
 * output (malloc'd) returned. */
static unsigned char *launch(const fdt_problem *p, const fdt_layout *l, const fdtuned_box *b,
                             const fdt_geometry *g, int nb, const fdt_params *q)
{
    size_t es = fdt_prec_size(p->prec), bytes = (size_t)l->elems * es;
    unsigned char *out = malloc(bytes);
    assert_non_null(out);
    memset(out, 0xff, bytes); /* NaN in both precisions: the poison */
    write_bytes("out.bin", out, bytes);
    fdt_sb cmd;
    fdt_sb_init(&cmd);
    fdt_sb_printf(&cmd, "%s/h %s %lld %lld %lld %lld %lld %lld %lld %lld %d", dir, dir,
                  (long long)l->elems, (long long)(p->nx + p->ny + p->nz), (long long)l->offset,
                  (long long)l->line, (long long)l->slice, (long long)q->si, (long long)q->sj,
                  (long long)q->sk, nb);
    for (int i = 0; i < nb; i++) {
        const fdt_launch *L = &g[i].launch[0];
        assert_int_equal(g[i].nlaunch, 1);
        fdt_sb_printf(&cmd, " %d %lld %lld %lld %lld %lld %lld", b[i].damped, b[i].g[0],
                      b[i].g[1], b[i].g[2], b[i].n[0], b[i].n[1], b[i].n[2]);
        for (int h = 0; h < 6; h++)
            fdt_sb_printf(&cmd, " %lld", b[i].hole[h]);
        fdt_sb_printf(&cmd, " %d %d %u %u %u %u %u %u", L->jbeg, L->jend, L->grid[0],
                      L->grid[1], L->grid[2], L->block[0], L->block[1], L->block[2]);
    }
    assert_int_equal(run(fdt_sb_str(&cmd)), 0);
    fdt_sb_free(&cmd);
    char path[400];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(out, 1, bytes, f), bytes);
    fclose(f);
    return out;
}

static int poisoned(const unsigned char *out, int64_t at, size_t es)
{
    for (size_t i = 0; i < es; i++)
        if (out[at * (int64_t)es + (int64_t)i] != 0xff)
            return 0;
    return 1;
}

/* One family's kernel pair with one damping form, over the three deployments. */
static void check_family(const char *config, fdt_prec prec)
{
    fdt_problem p = {FDT_OP_DWAVE, 2, prec, NX, NY, NZ, W, 0.5};
    fdt_config c;
    fdt_err e;
    assert_int_equal(fdt_config_parse(config, &c, &e), 0);
    fdt_layout l;
    assert_int_equal(fdt_layout_make(&p, c.align, &l, &e), 0);
    fdt_sb src;
    fdt_sb_init(&src);
    if (fdt_gen_source(&HIP, &p, &c, "kern", NULL, &src, &e))
        fail_msg("%s: %s", config, e.msg);
    fdt_sb k;
    fdt_sb_init(&k);
    /* the tile's static shared memory: one array for all the threads of a block */
    fdt_sb_printf(&k, "#include \"hip/hip_runtime.h\"\n%s%s", c.lds == 1 ?
                  "#undef __shared__\n#define __shared__ static\n" : "", fdt_sb_str(&src));
    write_bytes("kernel.cu", fdt_sb_str(&k), strlen(fdt_sb_str(&k)));
    fdt_sb_free(&k);
    fdt_sb_free(&src);
    const char *tree = getenv("FDTUNE_TEST_SRC"); /* the source tree (ctest sets it) */
    if (!tree)
        fail_msg("FDTUNE_TEST_SRC is not set: run this test through ctest");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "g++ -std=c++20 -O1 -ffp-contract=off -pthread -I %s/tests/"
             "ring_host -I %s -DREAL=%s %s/harness.cpp -o %s/h", tree, dir,
             prec == FDT_F32 ? "float" : "double", dir, dir);
    if (run(cmd))
        fail_msg("%s: the harness did not compile", config);
    size_t es = fdt_prec_size(prec), bytes = (size_t)l.elems * es;
    host_inputs h = {&p, &l, {NULL}};
    for (int f = 0; f < 3; f++) {
        h.in[f] = malloc(bytes);
        assert_non_null(h.in[f]);
        fill(&p, &l, f, h.in[f]);
    }
    write_bytes("in.bin", h.in[0], bytes);
    write_bytes("prev.bin", h.in[1], bytes);
    write_bytes("c2.bin", h.in[2], bytes);
    void *eta = malloc(fdt_absorb_profile_bytes(&p));
    assert_int_equal(fdt_absorb_profile(&p, eta, &e), 0);
    write_bytes("eta.bin", eta, fdt_absorb_profile_bytes(&p));
    free(eta);
    fdt_params q;
    fdt_params_default(&p, &q);
    q.si = p.R + W / 2, q.sj = p.R + NY / 2, q.sk = p.R + NZ / 2; /* the source in the layer */
    long double coef[FDT_R_MAX + 1];
    assert_int_equal(fdt_fd_coeffs(p.R, coef, &e), 0);
    fdt_tolerance tol;
    fdt_tolerance_make(&p, &q, &tol);
    unsigned char *first = NULL;
    for (int dep = 0; dep < 3; dep++) {
        c.deploy = dep;
        fdt_deploy d;
        if (fdt_gen_deploy(&HIP, &p, &c, &d, &e))
            fail_msg("%s deploy=%d: %s", config, dep, e.msg);
        /* each box alone: its points but the hole written, nothing else */
        for (int i = 0; i < d.nbox; i++) {
            unsigned char *o = launch(&p, &l, &d.box[i], &d.geo[i], 1, &q);
            const fdtuned_box *b = &d.box[i];
            long written = 0, expected = 0;
            for (int64_t at = 0; at < l.elems; at++)
                written += !poisoned(o, at, es);
            for (int64_t z = 0; z < b->n[2]; z++)
                for (int64_t y = 0; y < b->n[1]; y++)
                    for (int64_t x = 0; x < b->n[0]; x++) {
                        const long long *hl = b->hole;
                        int hole = x >= hl[0] && x < hl[1] && y >= hl[2] && y < hl[3] &&
                                   z >= hl[4] && z < hl[5];
                        int64_t at = fdt_layout_index(&l, p.R + b->g[0] + x, p.R + b->g[1] + y,
                                                      p.R + b->g[2] + z);
                        if (hole != poisoned(o, at, es))
                            fail_msg("%s deploy=%d box %d: (%lld, %lld, %lld) %s", config, dep,
                                     i, (long long)x, (long long)y, (long long)z,
                                     hole ? "in the hole written" : "not written");
                        expected += !hole;
                    }
            if (written != expected)
                fail_msg("%s deploy=%d box %d: %ld elements written outside it", config, dep, i,
                         written - expected);
            free(o);
        }
        unsigned char *o = launch(&p, &l, d.box, d.geo, d.nbox, &q);
        if (!first) { /* against the fp64 reference */
            long bad = 0;
            for (int64_t z = p.R; z < p.R + NZ; z++)
                for (int64_t y = p.R; y < p.R + NY; y++)
                    for (int64_t x = p.R; x < p.R + NX; x++) {
                        int64_t at = fdt_layout_index(&l, x, y, z);
                        double got = prec == FDT_F32 ? ((float *)o)[at] : ((double *)o)[at];
                        double want = fdt_reference_point(&p, &q, coef, input, &h, x, y, z);
                        if (!(fabs(got - want) <= tol.ref_vs_exact) && !bad++)
                            print_error("%s: (%lld, %lld, %lld) %.9g, want %.9g\n", config,
                                        (long long)x, (long long)y, (long long)z, got, want);
                    }
            assert_int_equal(bad, 0);
            first = o;
        } else {
            if (memcmp(first, o, (size_t)l.elems * es))
                fail_msg("%s: deployment %d's output differs from complete's", config, dep);
            free(o);
        }
    }
    free(first);
    for (int f = 0; f < 3; f++)
        free(h.in[f]);
}

static void test_families(void **state)
{
    (void)state;
    static const struct {
        const char *config;
        fdt_prec prec;
    } cases[] = {
        {"bx=8,by=4,tile=2", FDT_F32},
        {"bx=8,by=4,tile=2,eta=array", FDT_F64},
        {"bx=8,by=2,nw=4,vec=2,align=2,pf=2", FDT_F32},
        {"bx=8,by=2,nw=4,eta=array", FDT_F32},
        {"bx=8,by=4,nw=4,lds=1,tile=2", FDT_F64},
        {"bx=8,by=4,nw=4,lds=2,pf=2,vec=2,align=2,eta=array", FDT_F32},
        {"bx=8,by=4,nw=4,lds=3,pf=2,tile=2", FDT_F32},
        {"bx=4,by=4,nw=4,lds=3,pf=1,eta=array", FDT_F64},
        /* layer=select: every row damped, no branch (the NVIDIA recipes' form) */
        {"bx=8,by=4,tile=2,layer=select", FDT_F64},
        {"bx=8,by=4,nw=4,lds=2,pf=2,vec=2,align=2,eta=array,layer=select", FDT_F32},
        {"bx=8,by=4,nw=4,lds=3,pf=2,tile=2,layer=select", FDT_F32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_family(cases[i].config, cases[i].prec);
        print_message("%s %s: every deployment checked\n", cases[i].config,
                      fdt_prec_name(cases[i].prec));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
