// A stand-in for the one declaration of Apple's <string.h> that Checksum.c uses, for
// Scripts/typecheck-apple-blocks, which compiles it for Apple's ARM64 targets without their SDK.
#include <stddef.h>
void *memcpy(void *destination, const void *source, size_t count);
