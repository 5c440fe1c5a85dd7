/*
 * A stand-in libnvidia-ml.so.1 for tests on hosts without an NVIDIA GPU: exactly the NVML
 * functions the flink-devices NVIDIA driver binds (NvmlLibrary.java), with nvml.h's signatures
 * and structure layouts, answering from the state file that testkit's InstalledNvidiaHost writes
 * next to this library ("<this library's path>.state"; its format is documented there). The file
 * is read again on every call, so a test changes the GPUs while the driver runs.
 *
 * Built by testkit's NvmlStandIn with the host's cc: cc -shared -fPIC -o libnvidia-ml.so.1 nvml-standin.c -lpthread
 * -DNVML_STANDIN_BEFORE_R510 leaves out nvmlDeviceGetMemoryInfo_v2 and -DNVML_STANDIN_WITHOUT_MIG the MIG
 * functions, as an older driver's library lacks them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

#define MAX_GPUS 16
#define MAX_MIGS 8
#define MAX_EVENTS 256

typedef struct device {
    int is_mig;
    int index;
    struct device *parent;
    char uuid[96];
    char name[96];
    char bus_id[32];
    unsigned long long mem_total, mem_used;
    unsigned int util, mem_util, temp, power_mw;
    unsigned long long ecc_corrected, ecc_uncorrected;
    int cc_major, cc_minor, mig_capable, mig_enabled, lost;
    unsigned long long throttle; /* nvmlClocksThrottleReason* bits */
    unsigned int gi, ci;
    int mig_count;
    struct device *migs[MAX_MIGS];
} device_t;

typedef struct {
    unsigned long long seq;
    int gpu;
    unsigned long long type, data;
    unsigned int gi, ci;
} event_t;

typedef struct {
    unsigned long long delivered;
    unsigned long long types[MAX_GPUS];
} event_set_t;

typedef struct {
    device_t *device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static device_t gpus[MAX_GPUS];
static device_t migs[MAX_GPUS][MAX_MIGS];
static int gpu_count;
static event_t events[MAX_EVENTS];
static int event_count;
static int init_error;
static int hang; /* "hang 1": every call blocks until the line is gone, as a driver that no longer answers */
static long slow_ms; /* "slow <ms>": nvmlInit_v2 takes that long, as NVML bringing up GPUs without persistence mode */
static int initialized;
/* "crash <where> <how>": where is init (nvmlInit_v2), errorstring (nvmlErrorString) or sample
 * (nvmlDeviceGetUtilizationRates, which only a monitor sample calls); how is segv, abort or exit
 * (exit code 3), and for errorstring badpointer (a pointer to no readable memory), as a broken or
 * mismatched library does. */
static char crash_where[16];
static char crash_how[16];
/* "garbage <what>": count (nvmlDeviceGetCount_v2 says 0xFFFFFFFF GPUs), uuid (every UUID is
   empty) or errorstring (nvmlErrorString gives 1 MiB of text) */
static int garbage_count;
static int garbage_uuid;
static int garbage_errorstring;
static char *long_error;

static int state_path(char *out, size_t n) {
    Dl_info info;
    if (!dladdr((void *) &state_path, &info) || info.dli_fname == NULL) {
        return -1;
    }
    snprintf(out, n, "%s.state", info.dli_fname);
    return 0;
}

static char *field(char **cursor) {
    char *start = *cursor;
    if (start == NULL) {
        return "";
    }
    char *tab = strchr(start, '\t');
    if (tab) {
        *tab = 0;
        *cursor = tab + 1;
    } else {
        *cursor = NULL;
    }
    return start;
}

/* Reads the state file; -1 when it is missing (as if the kernel driver were not loaded). */
static int reload(void) {
    char path[4096];
    hang = 0;
    slow_ms = 0;
    crash_where[0] = 0;
    crash_how[0] = 0;
    garbage_count = 0;
    garbage_uuid = 0;
    garbage_errorstring = 0;
    if (state_path(path, sizeof path) != 0) {
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    char line[1024];
    gpu_count = 0;
    event_count = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c = line;
        char *kind = field(&c);
        if (strcmp(kind, "init") == 0) {
            init_error = atoi(field(&c));
        } else if (strcmp(kind, "hang") == 0) {
            hang = atoi(field(&c));
        } else if (strcmp(kind, "slow") == 0) {
            slow_ms = atol(field(&c));
        } else if (strcmp(kind, "garbage") == 0) {
            char *what = field(&c);
            garbage_count |= strcmp(what, "count") == 0;
            garbage_uuid |= strcmp(what, "uuid") == 0;
            garbage_errorstring |= strcmp(what, "errorstring") == 0;
        } else if (strcmp(kind, "crash") == 0) {
            snprintf(crash_where, sizeof crash_where, "%s", field(&c));
            snprintf(crash_how, sizeof crash_how, "%s", field(&c));
        } else if (strcmp(kind, "gpu") == 0 && gpu_count < MAX_GPUS) {
            device_t *g = &gpus[gpu_count++];
            int mig_count = 0;
            memset(g, 0, sizeof *g);
            g->index = atoi(field(&c));
            snprintf(g->uuid, sizeof g->uuid, "%s", field(&c));
            snprintf(g->name, sizeof g->name, "%s", field(&c));
            snprintf(g->bus_id, sizeof g->bus_id, "%s", field(&c));
            g->mem_total = strtoull(field(&c), NULL, 10);
            g->mem_used = strtoull(field(&c), NULL, 10);
            g->util = atoi(field(&c));
            g->mem_util = atoi(field(&c));
            g->temp = atoi(field(&c));
            g->power_mw = atoi(field(&c));
            g->ecc_corrected = strtoull(field(&c), NULL, 10);
            g->ecc_uncorrected = strtoull(field(&c), NULL, 10);
            g->cc_major = atoi(field(&c));
            g->cc_minor = atoi(field(&c));
            g->mig_capable = atoi(field(&c));
            g->mig_enabled = atoi(field(&c));
            g->lost = atoi(field(&c));
            g->throttle = strtoull(field(&c), NULL, 10);
            g->mig_count = mig_count;
        } else if (strcmp(kind, "mig") == 0) {
            int gi = atoi(field(&c));
            int d = atoi(field(&c));
            if (gi < 0 || gi >= gpu_count || d < 0 || d >= MAX_MIGS) {
                continue;
            }
            device_t *p = &gpus[gi];
            device_t *m = &migs[gi][d];
            memset(m, 0, sizeof *m);
            m->is_mig = 1;
            m->index = d;
            m->parent = p;
            snprintf(m->uuid, sizeof m->uuid, "%s", field(&c));
            char *profile = field(&c);
            snprintf(m->name, sizeof m->name, "%s MIG %s", p->name, profile);
            m->gi = atoi(field(&c));
            m->ci = atoi(field(&c));
            m->mem_total = strtoull(field(&c), NULL, 10);
            m->mem_used = strtoull(field(&c), NULL, 10);
            p->migs[d] = m;
            if (d + 1 > p->mig_count) {
                p->mig_count = d + 1;
            }
        } else if (strcmp(kind, "event") == 0 && event_count < MAX_EVENTS) {
            event_t *e = &events[event_count++];
            e->seq = strtoull(field(&c), NULL, 10);
            e->gpu = atoi(field(&c));
            e->type = strtoull(field(&c), NULL, 10);
            e->data = strtoull(field(&c), NULL, 10);
            e->gi = (unsigned int) strtoul(field(&c), NULL, 10);
            e->ci = (unsigned int) strtoul(field(&c), NULL, 10);
        }
    }
    fclose(f);
    return 0;
}

/* With the lock held: crashes the process the way the state says, where it says "crash <where>". */
static void crash_if(const char *where) {
    if (strcmp(crash_where, where) != 0) {
        return;
    }
    if (strcmp(crash_how, "segv") == 0) {
        volatile int *nowhere = (volatile int *) 8;
        *nowhere = 1;
    } else if (strcmp(crash_how, "abort") == 0) {
        abort();
    } else if (strcmp(crash_how, "exit") == 0) {
        exit(3);
    }
}

/* With the lock held: while the state says "hang", waits (the lock released) and re-reads it. */
static void wait_while_hanging(void) {
    while (hang) {
        struct timespec pause = {0, 20 * 1000 * 1000};
        pthread_mutex_unlock(&lock);
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&lock);
        reload();
    }
}

/* Locks, re-reads the state, checks the handle: every device call starts here. */
static nvmlReturn_t enter(device_t *d) {
    pthread_mutex_lock(&lock);
    if (!initialized) {
        pthread_mutex_unlock(&lock);
        return NVML_ERROR_UNINITIALIZED;
    }
    reload();
    wait_while_hanging();
    if (d == NULL) {
        pthread_mutex_unlock(&lock);
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    device_t *gpu = d->is_mig ? d->parent : d;
    if (gpu->lost) {
        pthread_mutex_unlock(&lock);
        return NVML_ERROR_GPU_IS_LOST;
    }
    return NVML_SUCCESS;
}

#define ENTER(d)                          \
    do {                                  \
        nvmlReturn_t rc_ = enter(d);      \
        if (rc_ != NVML_SUCCESS) {        \
            return rc_;                   \
        }                                 \
    } while (0)
/* rc is evaluated before the unlock: LEAVE(copy(out, n, d->uuid)) reads the device under the lock,
   not while another thread's reload() clears and refills it */
#define LEAVE(rc)                         \
    do {                                  \
        nvmlReturn_t leave_rc_ = (rc);    \
        pthread_mutex_unlock(&lock);      \
        return leave_rc_;                 \
    } while (0)

nvmlReturn_t nvmlInit_v2(void) {
    pthread_mutex_lock(&lock);
    nvmlReturn_t rc = reload() != 0 ? NVML_ERROR_DRIVER_NOT_LOADED : init_error;
    crash_if("init");
    wait_while_hanging();
    if (slow_ms > 0) {
        struct timespec pause = {slow_ms / 1000, (slow_ms % 1000) * 1000 * 1000};
        pthread_mutex_unlock(&lock);
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&lock);
    }
    if (rc == NVML_SUCCESS) {
        initialized++;
    }
    LEAVE(rc);
}

nvmlReturn_t nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    if (initialized > 0) {
        initialized--;
    }
    LEAVE(NVML_SUCCESS);
}

const char *nvmlErrorString(nvmlReturn_t r) {
    pthread_mutex_lock(&lock);
    reload();
    int bad = strcmp(crash_where, "errorstring") == 0;
    if (bad && strcmp(crash_how, "badpointer") != 0) {
        crash_if("errorstring");
    }
    int long_text = garbage_errorstring;
    if (long_text && long_error == NULL) {
        long_error = malloc(1 << 20);
        if (long_error != NULL) {
            memset(long_error, 'x', (1 << 20) - 1);
            long_error[(1 << 20) - 1] = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    if (bad) {
        return (const char *) 16;
    }
    if (long_text && long_error != NULL) {
        return long_error;
    }
    switch (r) {
        case 0: return "Success";
        case 1: return "Uninitialized";
        case 2: return "Invalid Argument";
        case 3: return "Not Supported";
        case 4: return "Insufficient Permissions";
        case 6: return "Not Found";
        case 7: return "Insufficient Size";
        case 9: return "Driver Not Loaded";
        case 10: return "Timeout";
        case 15: return "GPU is lost";
        case 18: return "RM has detected an NVML/RM version mismatch.";
        case 25: return "Argument version mismatch";
        default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    pthread_mutex_lock(&lock);
    if (!initialized) LEAVE(NVML_ERROR_UNINITIALIZED);
    reload();
    *count = garbage_count ? 0xFFFFFFFFu : (unsigned int) gpu_count;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, device_t **device) {
    pthread_mutex_lock(&lock);
    if (!initialized) LEAVE(NVML_ERROR_UNINITIALIZED);
    reload();
    if (index >= (unsigned int) gpu_count) LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    *device = &gpus[index];
    LEAVE(NVML_SUCCESS);
}

static nvmlReturn_t copy(char *out, unsigned int length, const char *s) {
    if (strlen(s) + 1 > length) {
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    strcpy(out, s);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(device_t *d, char *name, unsigned int length) {
    ENTER(d);
    LEAVE(copy(name, length, d->name));
}

nvmlReturn_t nvmlDeviceGetUUID(device_t *d, char *uuid, unsigned int length) {
    ENTER(d);
    LEAVE(copy(uuid, length, garbage_uuid ? "" : d->uuid));
}

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

nvmlReturn_t nvmlDeviceGetPciInfo_v3(device_t *d, nvmlPciInfo_t *pci) {
    ENTER(d);
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", d->bus_id);
    unsigned int domain = 0, bus = 0, dev = 0;
    sscanf(d->bus_id, "%x:%x:%x", &domain, &bus, &dev);
    pci->domain = domain;
    pci->bus = bus;
    pci->device = dev;
    LEAVE(NVML_SUCCESS);
}

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;

nvmlReturn_t nvmlDeviceGetMemoryInfo(device_t *d, nvmlMemory_t *m) {
    ENTER(d);
    m->total = d->mem_total;
    m->used = d->mem_used;
    m->free = d->mem_total - d->mem_used;
    LEAVE(NVML_SUCCESS);
}

#ifndef NVML_STANDIN_BEFORE_R510 /* an older driver's library lacks it */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(device_t *d, nvmlMemory_v2_t *m) {
    ENTER(d);
    if (m->version != (unsigned int) (sizeof(nvmlMemory_v2_t) | 2 << 24)) LEAVE(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    m->total = d->mem_total;
    m->reserved = 0;
    m->used = d->mem_used;
    m->free = d->mem_total - d->mem_used;
    LEAVE(NVML_SUCCESS);
}
#endif

typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;

nvmlReturn_t nvmlDeviceGetUtilizationRates(device_t *d, nvmlUtilization_t *u) {
    ENTER(d);
    crash_if("sample");
    if (d->is_mig) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    u->gpu = d->util;
    u->memory = d->mem_util;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperature(device_t *d, int sensor, unsigned int *temp) {
    ENTER(d);
    if (sensor != 0 || d->is_mig) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *temp = d->temp;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(device_t *d, unsigned int *mw) {
    ENTER(d);
    if (d->is_mig) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *mw = d->power_mw;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(device_t *d, int errorType, int counterType, unsigned long long *count) {
    ENTER(d);
    if (counterType != 0 || d->is_mig) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *count = errorType == 0 ? d->ecc_corrected : d->ecc_uncorrected;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(device_t *d, unsigned long long *reasons) {
    ENTER(d);
    if (d->is_mig) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *reasons = d->throttle;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(device_t *d, int *major, int *minor) {
    ENTER(d);
    if (d->cc_major == -1 && d->cc_minor == -1) LEAVE(NVML_ERROR_NOT_SUPPORTED); /* a host that leaves optional fields out */
    *major = d->cc_major;
    *minor = d->cc_minor;
    LEAVE(NVML_SUCCESS);
}

#ifndef NVML_STANDIN_WITHOUT_MIG /* a library from before MIG lacks these */
nvmlReturn_t nvmlDeviceGetMigMode(device_t *d, unsigned int *current, unsigned int *pending) {
    ENTER(d);
    if (!d->mig_capable) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *current = *pending = d->mig_enabled;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(device_t *d, unsigned int *count) {
    ENTER(d);
    *count = d->mig_capable ? 7 : 0;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(device_t *d, unsigned int index, device_t **mig) {
    ENTER(d);
    if (!d->mig_enabled) LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    if (index >= MAX_MIGS || index >= (unsigned int) d->mig_count || d->migs[index] == NULL) LEAVE(NVML_ERROR_NOT_FOUND);
    *mig = d->migs[index];
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(device_t *d, unsigned int *id) {
    ENTER(d);
    if (!d->is_mig) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *id = d->gi;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(device_t *d, unsigned int *id) {
    ENTER(d);
    if (!d->is_mig) LEAVE(NVML_ERROR_NOT_SUPPORTED);
    *id = d->ci;
    LEAVE(NVML_SUCCESS);
}
#endif

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(device_t *d, unsigned long long *types) {
    ENTER(d);
    *types = 0x1 | 0x2 | 0x4 | 0x8;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlEventSetCreate(event_set_t **set) {
    pthread_mutex_lock(&lock);
    if (!initialized) LEAVE(NVML_ERROR_UNINITIALIZED);
    event_set_t *s = calloc(1, sizeof *s);
    reload();
    /* only events after the set was created */
    for (int i = 0; i < event_count; i++) {
        if (events[i].seq > s->delivered) {
            s->delivered = events[i].seq;
        }
    }
    *set = s;
    LEAVE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceRegisterEvents(device_t *d, unsigned long long types, event_set_t *set) {
    ENTER(d);
    if (set == NULL || d->is_mig) LEAVE(NVML_ERROR_INVALID_ARGUMENT);
    set->types[d - gpus] |= types;
    LEAVE(NVML_SUCCESS);
}

/* The next queued event of a registered GPU; waits up to timeoutms for one. */
nvmlReturn_t nvmlEventSetWait_v2(event_set_t *set, nvmlEventData_t *data, unsigned int timeoutms) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pthread_mutex_lock(&lock);
        if (!initialized) LEAVE(NVML_ERROR_UNINITIALIZED);
        reload();
        for (int i = 0; i < event_count; i++) {
            event_t *e = &events[i];
            if (e->seq <= set->delivered) {
                continue;
            }
            set->delivered = e->seq;
            if (e->gpu < 0 || e->gpu >= gpu_count || (set->types[e->gpu] & e->type) == 0) {
                continue;
            }
            data->device = &gpus[e->gpu];
            data->eventType = e->type;
            data->eventData = e->data;
            data->gpuInstanceId = e->gi;
            data->computeInstanceId = e->ci;
            LEAVE(NVML_SUCCESS);
        }
        pthread_mutex_unlock(&lock);
        clock_gettime(CLOCK_MONOTONIC, &now);
        long waited = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (waited >= (long) timeoutms) {
            return NVML_ERROR_TIMEOUT;
        }
        struct timespec ten = {0, 10 * 1000 * 1000};
        nanosleep(&ten, NULL);
    }
}

nvmlReturn_t nvmlEventSetFree(event_set_t *set) {
    free(set);
    return NVML_SUCCESS;
}
