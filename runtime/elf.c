/* The size of the machine code in a compiled code object. NVRTC's cubins and AMD's code
 * objects are ELF64 files; their executable sections (SHF_EXECINSTR PROGBITS: a cubin's
 * .text.<kernel>, an AMD object's .text) hold the instructions. The evaluation prunes kernels
 * whose code outgrows what the architecture's instruction cache was measured to hold
 * (fdt_arch.code_limit, eval/evaluate.c), so only the section table is read: the layout is
 * glibc's <elf.h>, every offset checked against the image. */
#include "fdt_rt.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

long fdt_rt_elf_code_bytes(const void *image, size_t size)
{
    const unsigned char *b = image;
    Elf64_Ehdr eh;
    if (!b || size < sizeof eh)
        return -1;
    memcpy(&eh, b, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
        return -1;
    if (eh.e_shoff > size || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff)
        return -1;
    long code = 0;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, b + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR))
            code += (long)sh.sh_size;
    }
    return code;
}
