// Non-temporal (streaming) stores: values go to memory without their cache lines being read
// first (no read-for-ownership) and without displacing the inputs from the caches. Written
// with the ISA's own instructions where there is one, and as ordinary stores elsewhere, so
// the code builds on any ISA: x86-64 (SSE2, AVX, AVX-512 intrinsics) and AArch64 (STNP of a
// pair of 16-byte registers), by gcc and clang alike.
//
// Template variables: NS (the prefix of these helpers), REAL (float | double).
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define {{NS}}_NTB 64  // bytes per streaming store
#elif defined(__AVX__) || defined(__aarch64__)
#define {{NS}}_NTB 32
#elif defined(__SSE2__)
#define {{NS}}_NTB 16
#else
#define {{NS}}_NTB 0   // no streaming store known: ordinary stores
#endif

// One streaming store of NTB bytes from s (any alignment) to d (aligned to NTB bytes). The
// bytes are moved as they are, so one routine serves float and double.
static inline void {{NS}}_nt_store(void *d, const void *s)
{
#if defined(__AVX512F__)
    _mm512_stream_ps((float *)d, _mm512_loadu_ps((const float *)s));
#elif defined(__AVX__)
    _mm256_stream_ps((float *)d, _mm256_loadu_ps((const float *)s));
#elif defined(__SSE2__)
    _mm_stream_ps((float *)d, _mm_loadu_ps((const float *)s));
#elif defined(__aarch64__)
    typedef float q_t __attribute__((vector_size(16)));
    q_t a, b;
    __builtin_memcpy(&a, s, 16);
    __builtin_memcpy(&b, (const char *)s + 16, 16);
    __asm__ volatile("stnp %q1, %q2, [%0]" : : "r"(d), "w"(a), "w"(b) : "memory");
#else
    __builtin_memcpy(d, s, 1);  // not reached: NTB is 0
#endif
}

// dst[0..n) = src[0..n): streaming stores for the NTB-aligned middle, ordinary ones for the
// ends.
static inline void {{NS}}_stream({{REAL}} *restrict dst, const {{REAL}} *restrict src,
                                 ptrdiff_t n)
{
    ptrdiff_t q = 0;
#if {{NS}}_NTB > 0
    enum { PER = {{NS}}_NTB / (int)sizeof({{REAL}}) };  // values per streaming store
    for (; q < n && ((uintptr_t)(dst + q) & ({{NS}}_NTB - 1)) != 0; ++q)
        dst[q] = src[q];
    for (; q + PER <= n; q += PER)
        {{NS}}_nt_store(dst + q, src + q);
#endif
    for (; q < n; ++q)
        dst[q] = src[q];
}

// Makes this thread's streaming stores visible to the others (they are weakly ordered):
// called by every thread before the barrier that ends its work.
static inline void {{NS}}_nt_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_sfence();
#elif defined(__aarch64__)
    __asm__ volatile("dmb ishst" : : : "memory");
#endif
}
