/* The OOM event log: reading its records and printing one (event_backend.c). */
#ifndef OOMCTL_EVENTS_H
#define OOMCTL_EVENTS_H

#include <stdint.h>

#include "oom_shared.h"

/*
 * Records of the event log after seq @after, oldest first, at most @max
 * (the newest ones); *head gets the log's head. Returns the count or -errno.
 */
int events_read(uint64_t after, struct oom_event *evs, int max, uint64_t *head);
/* One record as a line (plain) or an object (JSON) */
void event_print(const struct oom_event *e);

#endif /* OOMCTL_EVENTS_H */
