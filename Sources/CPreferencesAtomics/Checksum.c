// CRC-32C with the processor's own instruction, where it has one.
//
// x86-64's SSE 4.2 `crc32` and ARMv8's `crc32c*` compute CRC-32C (Castagnoli's polynomial, bits
// reflected): the same checksum as the tables in Swift, eight bytes an instruction. Each processor
// has its four instructions (eight, four, two and one bytes) below, and one loop uses them, compiled
// for the instructions whatever the target's baseline and called only once
// `preferences_crc32c_is_accelerated` said the processor has them.
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

#define CRC32C_TARGET __attribute__((target("sse4.2")))
CRC32C_TARGET static inline uint32_t crc32c_8(uint32_t crc, uint64_t bytes) {
    return (uint32_t)__builtin_ia32_crc32di(crc, bytes);
}
CRC32C_TARGET static inline uint32_t crc32c_4(uint32_t crc, uint32_t bytes) {
    return __builtin_ia32_crc32si(crc, bytes);
}
CRC32C_TARGET static inline uint32_t crc32c_2(uint32_t crc, uint16_t bytes) {
    return __builtin_ia32_crc32hi(crc, bytes);
}
CRC32C_TARGET static inline uint32_t crc32c_1(uint32_t crc, uint8_t byte) {
    return __builtin_ia32_crc32qi(crc, byte);
}

#elif defined(__aarch64__)
#include <arm_acle.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

// Mandatory from ARMv8.1 and present on every Apple processor this package's minimums run on. Where
// the compiler targets them (`__ARM_FEATURE_CRC32`: macOS, watchOS, visionOS) nothing needs asking;
// iOS and tvOS target a processor without them, so the system is asked, with the `sysctlbyname` key
// Apple documents under "Determining instruction set characteristics". Elsewhere (Linux built for
// plain ARMv8) the tables compute the checksum.
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

#define CRC32C_TARGET __attribute__((target("crc")))
CRC32C_TARGET static inline uint32_t crc32c_8(uint32_t crc, uint64_t bytes) {
    return __crc32cd(crc, bytes);
}
CRC32C_TARGET static inline uint32_t crc32c_4(uint32_t crc, uint32_t bytes) {
    return __crc32cw(crc, bytes);
}
CRC32C_TARGET static inline uint32_t crc32c_2(uint32_t crc, uint16_t bytes) {
    return __crc32ch(crc, bytes);
}
CRC32C_TARGET static inline uint32_t crc32c_1(uint32_t crc, uint8_t byte) {
    return __crc32cb(crc, byte);
}
#endif

#if defined(CRC32C_TARGET)
CRC32C_TARGET
uint32_t preferences_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);
        crc = crc32c_8(crc, word);
        next += 8;
        count -= 8;
    }
    // The last seven bytes or fewer as four, two and one: a byte at a time, the tail of a small
    // record cost as much as all its words.
    if (count & 4) {
        uint32_t word;
        memcpy(&word, next, 4);
        crc = crc32c_4(crc, word);
        next += 4;
    }
    if (count & 2) {
        uint16_t half;
        memcpy(&half, next, 2);
        crc = crc32c_2(crc, half);
        next += 2;
    }
    if (count & 1) {
        crc = crc32c_1(crc, *next);
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
