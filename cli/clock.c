/* Clocks of BPF records to wall time (clock.h). */
#include <time.h>

#include "clock.h"

uint64_t boot_to_realtime(uint64_t boot_ns)
{
	struct timespec real, boot;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return real.tv_sec * 1000000000ULL + real.tv_nsec -
	       (boot.tv_sec * 1000000000ULL + boot.tv_nsec - boot_ns);
}
