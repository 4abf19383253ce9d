/* Device backends behind one interface. `cuda` (libcuda driver API + NVRTC) and `hip`
 * (libamdhip64 + hiprtc + comgr) are loaded with dlopen at run time, so the binary starts on
 * any machine and says which backend is unavailable and why; `cpu` (runtime/cpu.c) runs
 * kernels on the host's cores, compiled by the system C compiler into shared objects (its
 * device pointers are host addresses, its launches synchronous calls). Compilation needs no GPU and
 * runs in a child process (fdt_rt_compile); the device side works on one current device per
 * process (the GPU worker opens exactly one). Device pointers are plain 64-bit integers. */
#ifndef FDT_RT_H
#define FDT_RT_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_common.h"
#include "fdt_device.h"
#include "fdtuned_layout.h"
#include "fdtuned_geometry.h"

/* What the compiler reports for one kernel (-1: not reported by this backend or target).
 * The pruning rules (eval/) read these; how each field is measured on each vendor: */
typedef struct fdt_rt_resources {
    int registers;     /* per thread: registers (NVIDIA) or VGPRs (AMD, .vgpr_count; on
                        * gfx90a/gfx94x the unified file's count, AGPRs included) */
    int sgprs;         /* AMD scalar registers per wave (.sgpr_count) */
    int agprs;         /* AMD accumulation registers per thread (.agpr_count; -1 where the
                        * target has none, e.g. gfx1100) */
    int spill_bytes;   /* registers spilled to memory, as bytes of spill stores per thread:
                        * NVIDIA ptxas's "spill stores"; AMD the VGPR spill stores
                        * (.vgpr_spill_count registers of 4 bytes) when the kernel has scratch
                        * to hold them, 0 when it has none (they went to AGPRs: no memory) */
    int scratch_bytes; /* NVIDIA: stack frame; AMD: private segment per work-item
                        * (.private_segment_fixed_size: the spill slots and private arrays) */
    int shared_bytes;  /* static shared memory / LDS per block */
    int max_threads;   /* largest block the code object allows (AMD), -1 otherwise */
    int sgpr_spills;   /* AMD: SGPRs spilled to VGPR lanes (.sgpr_spill_count; no memory
                        * traffic, so not in spill_bytes); -1 on NVIDIA */
    int code_bytes;    /* machine code: the bytes of the code object's executable sections
                        * (fdt_rt_elf_code_bytes), -1 when it is no ELF object; 0: not read */
} fdt_rt_resources;

typedef struct fdt_rt_code {
    char *image;       /* cubin or AMD code object */
    size_t size;
    char *log;         /* compiler output (NUL-terminated, may be empty) */
    fdt_rt_resources res;
    int cached;        /* 1 when served from the compile cache */
} fdt_rt_code;

/* One vendor library a backend loads: what it is for, which file was loaded and the version
 * the library reports of itself. */
typedef struct fdt_rt_lib {
    char backend[8];  /* "cuda", "hip", "cpu" */
    char role[16];    /* "driver", "NVRTC", "HIP runtime", "hiprtc", "comgr", "C compiler" */
    char path[512];   /* the real path of the file loaded; "" when none was */
    char version[64]; /* what the library says ("HIP 6.2.41133", "comgr 2.8", "nvrtc 13.0") */
    char note[512];   /* why none was loaded, or a remark ("inside libamdhip64: ROCm < 5.6") */
} fdt_rt_lib;

#define FDT_RT_MAX_LIBS 8 /* of all backends together */

/* A strided copy of a box of rows: `planes` planes of `rows` rows of `width` bytes, from src
 * to dst, each side with its own strides in bytes (line: from a row to the next; slice: from
 * a plane to the next). A side in host memory gives its host address as the integer. */
typedef struct fdt_rt_box_copy {
    uint64_t dst, src;       /* the box's first byte on each side */
    int dst_host, src_host;  /* 1: that side is host memory, 0: the device's */
    size_t width, rows, planes;
    size_t dst_line, dst_slice, src_line, src_slice;
} fdt_rt_box_copy;

typedef struct fdt_rt_backend {
    const char *name;        /* "cuda", "hip", "cpu" */
    const char *vendor;      /* "NVIDIA", "AMD"; "" for cpu (the CPU says its own) */
    const char *example_arch;
    const char *options; /* compiler options besides the target: part of the cache key */
    int uncached;        /* 1: its code is never cached (the simulator's placeholders) */
    int host;            /* 1: its device is the host CPU (cpu), which `--gpu auto`, `--gpu
                          * all` and the GPU probe never pick; 0: a GPU backend */

    /* --- compiler (no GPU needed) --- */
    /* The compiler's name and version for people ("nvrtc 13.0", "hiprtc 6.2.60200, comgr
     * 2.8"); loads the compiler library, fails saying why it cannot. */
    int (*compiler_version)(char *buf, size_t n, fdt_err *e);
    /* The identity of the compiler that compiles arch here, for the compile cache's key:
     * which compiler, its version, its files (a hash of their real paths, sizes and times:
     * a reinstalled or patched compiler of the same version is another compiler) and options
     * where they vary; NULL: compiler_version serves every arch. Fails saying what arch needs
     * when no compiler for it is found. */
    int (*compiler_id)(const char *arch, char *buf, size_t n, fdt_err *e);
    /* Whether this build's compiler takes target arch, asked before compiling what a person
     * asked for (fdt_rt_backend_for_target): -1 when it does not, e naming the targets it
     * takes; 0 when it does, or when that cannot be told here (the compiler does not load:
     * the compile says why). NULL: the compile says (hip finds its compiler per target). */
    int (*check_target)(const char *arch, fdt_err *e);
    /* In-process compile; use fdt_rt_compile, which isolates it in a child process. */
    int (*compile)(const char *src, const char *kernel, const char *arch, fdt_sb *image,
                   fdt_sb *log, fdt_rt_resources *res, fdt_err *e);
    /* In-process disassembly of a compiled image for arch (runs the vendor's tool); use
     * fdt_rt_disassemble, which isolates it in a child process. */
    int (*disassemble)(const char *image, size_t n, const char *arch, fdt_sb *out, fdt_err *e);

    /* The libraries this backend loads, each with its real path and version, at most max,
     * into libs; the runtime's too, loaded but no device opened. In-process (asking the HIP
     * runtime its version starts it): use fdt_rt_libraries. Returns how many. */
    int (*libraries)(fdt_rt_lib *libs, int max);

    /* --- devices --- */
    int (*device_count)(int *n, fdt_err *e); /* loads the driver; fails saying why */
    /* Describes visible device idx: identity, capabilities, software; index set, live 1.
     * The software fields are what the database's environment record keeps: the kernel driver
     * (and API) version, the runtime's version and file, the compiler's versions and files. */
    int (*device_info)(int idx, fdt_device *info, fdt_err *e);
    int (*open)(int idx, fdt_err *e); /* makes the device current in this process */
    /* The opened device's clocks now (fdt_clocks); NULL where they are not read (hip: no
     * rocm-smi/amdsmi; sim). Fails saying why, with c unknown. */
    int (*clocks)(fdt_clocks *c, fdt_err *e);
    int (*mem_info)(size_t *free_bytes, size_t *total, fdt_err *e);
    int (*alloc)(size_t bytes, uint64_t *ptr, fdt_err *e);
    void (*free)(uint64_t ptr);
    int (*copy_h2d)(uint64_t dst, const void *src, size_t n, fdt_err *e);
    int (*copy_d2h)(void *dst, uint64_t src, size_t n, fdt_err *e);
    int (*copy_d2d_async)(uint64_t dst, uint64_t src, size_t n, fdt_err *e);
    int (*memset_async)(uint64_t dst, unsigned char value, size_t n, fdt_err *e);
    /* Evicts the caches between timed samples by reading buf's n bytes (writing would leave
     * dirty lines for the next kernel to write back); NULL (GPUs): the worker writes the
     * buffer with memset_async instead. */
    int (*flush)(uint64_t buf, size_t n, fdt_err *e);
    int (*module_load)(const void *image, size_t n, void **module, fdt_err *e);
    int (*module_function)(void *module, const char *kernel, void **fn, fdt_err *e);
    void (*module_unload)(void *module);
    /* Lets fn use `bytes` of dynamic shared memory beyond the default limit (NVIDIA's opt-in
     * above 48 KB); NULL where no opt-in exists (AMD: a workgroup may use all its LDS). */
    int (*allow_shared)(void *fn, unsigned bytes, fdt_err *e);
    int (*launch)(void *fn, const uint32_t grid[3], const uint32_t block[3], unsigned shared,
                  void **args, fdt_err *e);
    int (*event_create)(void **ev, fdt_err *e);
    void (*event_destroy)(void *ev);
    int (*event_record)(void *ev, fdt_err *e);
    int (*event_elapsed)(void *start, void *stop, float *ms, fdt_err *e);
    int (*sync)(fdt_err *e);
    /* After an error: 1 when the context is unusable (illegal address, kernel fault), so the
     * process must be replaced; 0 when the error was local (bad launch configuration). */
    int (*context_lost)(void);

    /* --- pinned host memory and streams (the hybrid step; every backend has them) ---
     * A stream is an ordered queue of launches, copies and event records; NULL stands for
     * the default stream, which every call above uses. The CPU backend's streams run
     * synchronously in the order of the calls: each call has finished when it returns. */
    /* Page-locked host memory of `bytes` (the CPU: ordinary memory, 64-byte aligned), which
     * the async copies can move without staging; *p NULL on failure. */
    int (*host_alloc)(size_t bytes, void **p, fdt_err *e);
    void (*host_free)(void *p); /* of host_alloc's memory; NULL is a no-op */
    /* Pins and maps `bytes` of ordinary host memory from p (4 KiB-aligned: the CPU backend's
     * alloc), as host_alloc's memory is, for the async copies and host_device_ptr; the CPU:
     * nothing to do. host_unregister undoes it before the memory is freed. The hybrid runner
     * computes a host part in the CPU backend's memory (the pages and offsets its kernels
     * were tuned in) and registers it with the GPU that copies to and from it. */
    int (*host_register)(void *p, size_t bytes, fdt_err *e);
    void (*host_unregister)(void *p); /* NULL is a no-op */
    /* The opened device's address of host_alloc'ed memory p (the device reads and writes the
     * host's memory through it); the CPU: p itself. Fails saying why where the device cannot
     * map host memory. */
    int (*host_device_ptr)(void *p, uint64_t *dptr, fdt_err *e);
    /* *unified = 1 when the opened device reads the host's ordinary memory in place, through
     * the host's page tables or one shared memory (GH200's C2C, MI300A, an integrated GPU;
     * the CPU itself): a device of another memory and a host half need no copy. */
    int (*unified)(int *unified, fdt_err *e);
    int (*stream_create)(void **s, fdt_err *e);
    void (*stream_destroy)(void *s); /* NULL is a no-op */
    /* launch on stream s */
    int (*launch_on)(void *fn, const uint32_t grid[3], const uint32_t block[3], unsigned shared,
                     void **args, void *s, fdt_err *e);
    /* Copies queued on stream s; the host side must be host_alloc'ed memory for the copy to
     * overlap with other work (ordinary memory works but may wait). */
    int (*copy_h2d_on)(uint64_t dst, const void *src, size_t n, void *s, fdt_err *e);
    int (*copy_d2h_on)(void *dst, uint64_t src, size_t n, void *s, fdt_err *e);
    int (*copy_d2d_on)(uint64_t dst, uint64_t src, size_t n, void *s, fdt_err *e);
    int (*event_record_on)(void *ev, void *s, fdt_err *e);
    /* Work queued on s after this waits for ev's record (no host wait). */
    int (*stream_wait_event)(void *s, void *ev, fdt_err *e);
    int (*stream_sync)(void *s, fdt_err *e); /* the host waits for s's work */
    /* A box copy (fdt_rt_box_copy) queued on s: host to device, device to host or device to
     * device as its sides say (the CPU: host to host). One call however many rows (cuda: one
     * 3D copy; hip: a copy per contiguous run of rows). */
    int (*copy_box_on)(const fdt_rt_box_copy *c, void *s, fdt_err *e);

    /* --- the stream's tensor map (bulk=1) --- */
    /* Encodes tensor map t of esize-byte floats into map (FDT_RT_TMAP_BYTES, 128-byte
     * aligned), the kernel's last argument (fdt_gen_tmap); NULL where the kernels do not read
     * it (AMD, the CPU): the launcher passes zeros. Fails saying why (a driver without tensor
     * maps, an extent or stride it refuses). */
    int (*tensor_map)(const fdtuned_tmap *t, int esize, void *map, fdt_err *e);
} fdt_rt_backend;

/* Bytes of an encoded tensor map (CUDA's CUtensorMap; the kernels' fdt_tmap). */
#define FDT_RT_TMAP_BYTES 128

int fdt_rt_backend_count(void);
const fdt_rt_backend *fdt_rt_backend_at(int i);
/* A backend by name: one of the registry's, or the simulated GPUs' compile-only stand-in
 * FDT_SIM_BACKEND (runtime/sim.c), which the registry never lists. NULL: none. */
const fdt_rt_backend *fdt_rt_backend_find(const char *name);
/* The backend whose compiler targets `arch` ("sm_90" -> cuda, "gfx90a" -> hip: the backend
 * that claims it, fdt_device_claim_of); fails naming the targets of this build when no
 * backend in it does. */
const fdt_rt_backend *fdt_rt_backend_for_arch(const char *arch, fdt_err *e);
/* A target a person names (gen --target): fdt_rt_backend_for_arch's backend when its compiler
 * takes arch (check_target); NULL with e saying why not ("target 'sm_70': nvrtc 13.0 does
 * not compile for it; it compiles for sm_75, ..."). */
const fdt_rt_backend *fdt_rt_backend_for_target(const char *arch, fdt_err *e);
/* 1 when arch is one of b's architectures (b is the backend that claims it). */
int fdt_rt_backend_claims(const fdt_rt_backend *b, const char *arch);

/* A backend whose compiler does not load, and why. */
typedef struct fdt_rt_unavailable {
    const fdt_rt_backend *b;
    fdt_err why;
} fdt_rt_unavailable;
/* The default targets of this build: the example_arch of every GPU backend (host 0) whose
 * compiler loads, in backend order, at most max; the other GPU backends in skipped (may be
 * NULL; room for every backend), *nskipped of them. Returns how many targets. */
int fdt_rt_default_targets(const char **targets, int max, fdt_rt_unavailable *skipped,
                           int *nskipped);

/* The NVIDIA driver's version into buf, and where it came from (returned): "nvml" with
 * NVML's nvmlSystemGetDriverVersion ("580.159.04") when libnvidia-ml.so.1 loads (the dynamic
 * loader's search: LD_LIBRARY_PATH, the cache, the system directories) and answers; else
 * "cuda" with "CUDA driver API 13.0" from cuda_api (cuDriverGetVersion's 13000); else ""
 * with "unknown" (cuda_api <= 0). /proc/driver/nvidia/version is not read. */
const char *fdt_rt_nvidia_driver(int cuda_api, char *buf, size_t n);
/* The SM and memory clocks (current and maximum) and the throttle reasons of the NVIDIA GPU
 * at PCI address pci ("0000:18:00", as fdt_device.pci), from NVML now. Fails saying why (no
 * NVML, no GPU there), with c unknown (fdt_clocks_init). */
int fdt_rt_nvidia_clocks(const char *pci, fdt_clocks *c, fdt_err *e);

/* The libraries of every backend (their `libraries`), found in a child process so that the
 * caller loads and starts no GPU runtime: at most max into libs, *n of them. */
int fdt_rt_libraries(fdt_rt_lib *libs, int max, int *n, fdt_err *e);

/* Compiles in a child process (a compiler crash or hang becomes an error), through the
 * on-disk cache keyed by source, kernel, arch, compiler identity (compiler_id, else
 * compiler_version) and options. */
int fdt_rt_compile(const fdt_rt_backend *b, const char *src, const char *kernel, const char *arch,
                   int timeout_ms, fdt_rt_code *out, fdt_err *e);
void fdt_rt_code_free(fdt_rt_code *c);
/* The disassembly of compiled code for arch (llvm-objdump for AMD code objects, cuobjdump or
 * nvdisasm for cubins), made in a child process; fails saying which tool is missing. */
int fdt_rt_disassemble(const fdt_rt_backend *b, const fdt_rt_code *c, const char *arch,
                       int timeout_ms, fdt_sb *out, fdt_err *e);

/* One compilation of a batch. */
typedef struct fdt_rt_job {
    const char *src, *kernel;   /* in */
    fdt_rt_code code;           /* out, when rc == 0 */
    int rc;                     /* out: 0 compiled (or cached), -1 failed (err) */
    fdt_err err;
    double seconds;             /* out: wall time of this job's child (0 when cached) */
} fdt_rt_job;

/* Compiles a batch for one arch with up to `parallel` child processes at a time (a process
 * pool over the CPU cores; within a pool shared by several processes, fdt_child_pool_share,
 * fewer when the others use it), through the cache. Returns the number of failed jobs, or
 * -1 when nothing could be started (e). */
int fdt_rt_compile_many(const fdt_rt_backend *b, const char *arch, fdt_rt_job *jobs, size_t n,
                        int parallel, int timeout_ms, fdt_err *e);
/* fdt_rt_compile_many, telling on_done(ctx, done, n) (may be NULL) how many of the n jobs
 * are through: first those the cache answered, then one more as each compilation ends. */
int fdt_rt_compile_many_progress(const fdt_rt_backend *b, const char *arch, fdt_rt_job *jobs,
                                 size_t n, int parallel, int timeout_ms, fdt_done_fn on_done,
                                 void *ctx, fdt_err *e);
/* fdt_rt_compile_many_progress that gives up once cancelled(ctx) (may be NULL) answers
 * non-zero (fdt_run_many_cancel: nothing more starts, the compilations running are drained):
 * then it returns -1 with e "cancelled" and no job holds code. on_done and cancelled both get
 * ctx. */
int fdt_rt_compile_many_cancel(const fdt_rt_backend *b, const char *arch, fdt_rt_job *jobs,
                               size_t n, int parallel, int timeout_ms, fdt_done_fn on_done,
                               fdt_cancel_fn cancelled, void *ctx, fdt_err *e);
/* The CPU cores this process may run on (its affinity mask, which a batch system such as
 * SLURM narrows to the job's cores; the online cores when it cannot be read): the default
 * for `parallel`. */
int fdt_rt_cpu_count(void);
/* Compile cache directory: FDTUNE_CACHE, else $XDG_CACHE_HOME/fdtune, else ~/.cache/fdtune.
 * An empty FDTUNE_CACHE disables the cache. */
const char *fdt_rt_cache_dir(void);

/* Serialisation of compile results (used between processes and by the cache). */
int fdt_rt_code_pack(const fdt_rt_code *c, fdt_sb *out);
int fdt_rt_code_unpack(const char *data, size_t n, fdt_rt_code *c, fdt_err *e);

/* Parses ptxas -v output for one kernel (exposed for tests). */
void fdt_rt_parse_ptxas(const char *log, const char *kernel, fdt_rt_resources *res);

/* The bytes of machine code in an ELF64 code object (a cubin, an AMD code object): the sum of
 * the sizes of its executable (SHF_EXECINSTR) PROGBITS sections. -1 when image is no
 * little-endian ELF64 object or its section table lies outside it. */
long fdt_rt_elf_code_bytes(const void *image, size_t size);

#endif
