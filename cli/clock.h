/* Clocks: BPF records carry boot time, people read wall time. */
#ifndef OOMCTL_CLOCK_H
#define OOMCTL_CLOCK_H

#include <stdint.h>

/* CLOCK_BOOTTIME ns (BPF's bpf_ktime_get_boot_ns) to CLOCK_REALTIME ns */
uint64_t boot_to_realtime(uint64_t boot_ns);

#endif /* OOMCTL_CLOCK_H */
