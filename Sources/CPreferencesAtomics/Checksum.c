// CRC-32C with the processor's own instruction, where it has one.
#include "CPreferencesAtomics.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

int preferences_crc32c_is_accelerated(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    return (ecx & bit_SSE4_2) != 0;
}

// SSE 4.2's `crc32` computes CRC-32C (Castagnoli's polynomial, bits reflected): the same checksum as
// the tables in Swift, eight bytes an instruction. Compiled for SSE 4.2 whatever the target's
// baseline, and called only once `preferences_crc32c_is_accelerated` said the processor has it.
__attribute__((target("sse4.2")))
uint32_t preferences_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    uint64_t wide = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);
        wide = __builtin_ia32_crc32di(wide, word);
        next += 8;
        count -= 8;
    }
    crc = (uint32_t)wide;
    // The last seven bytes or fewer as four, two and one: a byte at a time, the tail of a small
    // record cost as much as all its words.
    if (count & 4) {
        uint32_t word;
        memcpy(&word, next, 4);
        crc = __builtin_ia32_crc32si(crc, word);
        next += 4;
    }
    if (count & 2) {
        uint16_t half;
        memcpy(&half, next, 2);
        crc = __builtin_ia32_crc32hi(crc, half);
        next += 2;
    }
    if (count & 1) {
        crc = __builtin_ia32_crc32qi(crc, *next);
    }
    return crc;
}
#elif defined(__aarch64__)
#include <arm_acle.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

// ARMv8's CRC-32C instructions, mandatory from ARMv8.1 and present on every Apple processor this
// package's minimums run on. Where the compiler targets them (`__ARM_FEATURE_CRC32`: macOS, watchOS,
// visionOS) nothing needs asking; iOS and tvOS target a processor without them, so the system is
// asked, with the `sysctlbyname` key Apple documents under "Determining instruction set
// characteristics". Elsewhere (Linux built for plain ARMv8) the tables compute the checksum.
int preferences_crc32c_is_accelerated(void) {
#if defined(__ARM_FEATURE_CRC32)
    return 1;
#elif defined(__APPLE__)
    int present = 0;
    size_t size = sizeof(present);
    return sysctlbyname("hw.optional.armv8_crc32", &present, &size, NULL, 0) == 0 && present != 0;
#else
    return 0;
#endif
}

// Compiled for the CRC extension whatever the target's baseline, and called only once
// `preferences_crc32c_is_accelerated` said the processor has it.
__attribute__((target("crc")))
uint32_t preferences_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);
        crc = __crc32cd(crc, word);
        next += 8;
        count -= 8;
    }
    if (count & 4) {
        uint32_t word;
        memcpy(&word, next, 4);
        crc = __crc32cw(crc, word);
        next += 4;
    }
    if (count & 2) {
        uint16_t half;
        memcpy(&half, next, 2);
        crc = __crc32ch(crc, half);
        next += 2;
    }
    if (count & 1) {
        crc = __crc32cb(crc, *next);
    }
    return crc;
}
#else
int preferences_crc32c_is_accelerated(void) {
    return 0;
}

uint32_t preferences_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
#endif
