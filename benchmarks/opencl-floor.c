/*
 * The OpenCL runtime's own share of the OpenCL plugin's TaskManager start: what the driver's
 * discovery asks of the ICD loader and the vendor runtime (load libOpenCL.so.1, clGetPlatformIDs,
 * clGetDeviceIDs), timed in a fresh process without a JVM. docs/measured-figures.md ("TaskManager
 * start cost of the plugins") compares it with the OpenCL row of TaskManagerStartBenchmark:
 *
 *   gcc -O1 -o /tmp/opencl-floor benchmarks/opencl-floor.c -ldl
 *   for i in $(seq 15); do /tmp/opencl-floor; done
 *
 * Prints one line: the milliseconds of each step and of the three together.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

typedef int (*get_platforms)(unsigned, void **, unsigned *);
typedef int (*get_devices)(void *, unsigned long, unsigned, void **, unsigned *);

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
    double start = now_ms();
    void *loader = dlopen("libOpenCL.so.1", RTLD_NOW);
    if (loader == NULL) {
        fprintf(stderr, "no OpenCL ICD loader: %s\n", dlerror());
        return 1;
    }
    double loaded = now_ms();
    get_platforms platforms = (get_platforms) dlsym(loader, "clGetPlatformIDs");
    get_devices devices = (get_devices) dlsym(loader, "clGetDeviceIDs");
    void *ids[16];
    unsigned n = 0;
    int r = platforms(16, ids, &n);
    double listed = now_ms();
    unsigned total = 0;
    for (unsigned p = 0; r == 0 && p < n; p++) {
        void *devs[64];
        unsigned m = 0;
        if (devices(ids[p], 0xFFFFFFFFul /* CL_DEVICE_TYPE_ALL */, 64, devs, &m) == 0) {
            total += m;
        }
    }
    double done = now_ms();
    printf("load %.1f ms, clGetPlatformIDs %.1f ms (%u platforms), clGetDeviceIDs %.1f ms (%u devices), total %.1f ms\n",
           loaded - start, listed - loaded, n, done - listed, total, done - start);
    return r == 0 ? 0 : 2;
}
