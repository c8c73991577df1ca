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
// Long runs of bytes go as three streams of `STREAM_BYTES` each: one instruction's result is ready
// three cycles after it starts, but a new one can start every cycle, so three independent streams
// checksum a snapshot about three times as fast as one. The three checksums are then joined: the
// checksum of `a` followed by `b` is the checksum of `a` moved past `b`'s length of zeros, added to
// the checksum of `b` from zero, since a CRC without its initial and final inversion is linear.
#define STREAM_BYTES 4096

// Moves a checksum past `STREAM_BYTES` zero bytes: the image of each of its 32 bits under that
// many steps of the CRC, for multiplying as a 32 by 32 matrix over GF(2). Generated once by running
// the bytewise CRC (Castagnoli's polynomial, reflected) on each bit alone; `ChecksumTests` checks
// the joined checksum against the bytewise definition at lengths around every stream boundary.
static const uint32_t past_one_stream[32] = {
    0xC2A5B65E, 0x80A71A4D, 0x04A2426B, 0x094484D6, 0x128909AC, 0x25121358, 0x4A2426B0, 0x94484D60,
    0x2D7CEC31, 0x5AF9D862, 0xB5F3B0C4, 0x6E0B1779, 0xDC162EF2, 0xBDC02B15, 0x7E6C20DB, 0xFCD841B6,
    0xFC5CF59D, 0xFD559DCB, 0xFF474D67, 0xFB62EC3F, 0xF329AE8F, 0xE3BF2BEF, 0xC292212F, 0x80C834AF,
    0x047C1FAF, 0x08F83F5E, 0x11F07EBC, 0x23E0FD78, 0x47C1FAF0, 0x8F83F5E0, 0x1AEB9D31, 0x35D73A62,
};

static uint32_t move_past_one_stream(uint32_t crc) {
    uint32_t moved = 0;
    for (int bit = 0; crc != 0; bit++, crc >>= 1) {
        if (crc & 1) {
            moved ^= past_one_stream[bit];
        }
    }
    return moved;
}

CRC32C_TARGET
uint32_t preferences_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    while (count >= 3 * STREAM_BYTES) {
        uint32_t first = crc, second = 0, third = 0;
        for (size_t offset = 0; offset < STREAM_BYTES; offset += 8) {
            uint64_t words[3];
            memcpy(&words[0], next + offset, 8);
            memcpy(&words[1], next + STREAM_BYTES + offset, 8);
            memcpy(&words[2], next + 2 * STREAM_BYTES + offset, 8);
            first = crc32c_8(first, words[0]);
            second = crc32c_8(second, words[1]);
            third = crc32c_8(third, words[2]);
        }
        crc = move_past_one_stream(move_past_one_stream(first) ^ second) ^ third;
        next += 3 * STREAM_BYTES;
        count -= 3 * STREAM_BYTES;
    }
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
