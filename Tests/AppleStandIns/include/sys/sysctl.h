// A stand-in for the one declaration of Apple's <sys/sysctl.h> that Checksum.c uses, with the
// signature Apple documents (sysctlbyname(3)), for Scripts/typecheck-apple-blocks.
#include <stddef.h>
int sysctlbyname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
