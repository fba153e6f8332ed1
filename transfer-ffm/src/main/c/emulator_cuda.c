/*
 * kvreuse NIXL emulator, real-GPU copy lane (see emulator_cuda.h).
 *
 * No CUDA headers: CI and developer machines build the emulator without the toolkit, so the few
 * runtime entry points are declared here from the public CUDA runtime API and bound with dlsym.
 * Opaque CUDA handles (streams, events) are plain pointers in the ABI; enums are ints.
 */
#define _GNU_SOURCE
#include "emulator_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

/* The public runtime API values this lane depends on. */
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_MEMORY_ALLOCATION = 2,    /* reported when the batch itself cannot be allocated */
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35, /* reported when called although no runtime is usable */
    CUDA_ERROR_NOT_READY = 600           /* cudaErrorNotReady: queried work still running */
};
enum { CUDA_MEMCPY_DEFAULT = 4 };       /* cudaMemcpyDefault: direction from unified addressing */
enum { CUDA_STREAM_NON_BLOCKING = 1 };  /* cudaStreamNonBlocking */
enum { CUDA_EVENT_DISABLE_TIMING = 2 }; /* cudaEventDisableTiming */

typedef int (*get_device_count_fn)(int *count);
typedef int (*stream_create_fn)(void **stream, unsigned flags);
typedef int (*stream_fn)(void *stream);
typedef int (*memcpy_async_fn)(void *dst, const void *src, size_t len, int kind, void *stream);
typedef int (*event_create_fn)(void **event, unsigned flags);
typedef int (*event_record_fn)(void *event, void *stream);
typedef int (*event_fn)(void *event);

static struct {
    bool ok;
    get_device_count_fn get_device_count;
    stream_create_fn stream_create;
    stream_fn stream_synchronize, stream_destroy;
    memcpy_async_fn memcpy_async;
    event_create_fn event_create;
    event_record_fn event_record;
    event_fn event_query, event_synchronize, event_destroy;
} g_rt;

static pthread_once_t g_rt_once = PTHREAD_ONCE_INIT;

struct emu_cuda_batch { void *event; };

static void *open_runtime(void) {
    /* An explicit path wins so the lane loads the very runtime the JVM already loaded (one copy of
     * cudart per process keeps the imported IPC mappings and streams in one runtime's view). */
    const char *configured = getenv("KVREUSE_EMU_CUDART");
    if (configured && *configured) return dlopen(configured, RTLD_NOW | RTLD_LOCAL);
    static const char *const names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    return NULL;
}

/* POSIX guarantees that dlsym's object pointer converts to a function pointer (gnu11 accepts it). */
#define BIND(field, type, name)                                                                    \
    do {                                                                                           \
        g_rt.field = (type)dlsym(lib, name);                                                       \
        if (!g_rt.field) all = false;                                                              \
    } while (0)

static void load_runtime(void) {
    void *lib = open_runtime();
    if (!lib) return;
    bool all = true;
    BIND(get_device_count, get_device_count_fn, "cudaGetDeviceCount");
    BIND(stream_create, stream_create_fn, "cudaStreamCreateWithFlags");
    BIND(stream_synchronize, stream_fn, "cudaStreamSynchronize");
    BIND(stream_destroy, stream_fn, "cudaStreamDestroy");
    BIND(memcpy_async, memcpy_async_fn, "cudaMemcpyAsync");
    BIND(event_create, event_create_fn, "cudaEventCreateWithFlags");
    BIND(event_record, event_record_fn, "cudaEventRecord");
    BIND(event_query, event_fn, "cudaEventQuery");
    BIND(event_synchronize, event_fn, "cudaEventSynchronize");
    BIND(event_destroy, event_fn, "cudaEventDestroy");
    int devices = 0;
    /* A runtime without a usable driver or GPU (a CI box with the toolkit installed) reports an
     * error or zero devices here: host-memory VRAM is then the right model. The library stays
     * loaded either way; unloading a CUDA runtime is not reliably safe. */
    if (all && g_rt.get_device_count(&devices) == CUDA_SUCCESS && devices > 0) g_rt.ok = true;
}

bool emu_cuda_available(void) {
    pthread_once(&g_rt_once, load_runtime);
    return g_rt.ok;
}

emu_cuda_batch *emu_cuda_copy_async(void **stream, const emu_copy_t *copies, size_t n, int *cuda_error) {
    if (!emu_cuda_available()) {
        *cuda_error = CUDA_ERROR_INSUFFICIENT_DRIVER;
        return NULL;
    }
    int err;
    if (!*stream) {
        /* Non-blocking: the legacy default stream must not serialise our copies with an engine's
         * kernels or with other agents' transfers in this process. */
        err = g_rt.stream_create(stream, CUDA_STREAM_NON_BLOCKING);
        if (err != CUDA_SUCCESS) {
            *stream = NULL;
            *cuda_error = err;
            return NULL;
        }
    }
    emu_cuda_batch *b = calloc(1, sizeof *b);
    if (!b) {
        *cuda_error = CUDA_ERROR_MEMORY_ALLOCATION;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        err = g_rt.memcpy_async(copies[i].dst, copies[i].src, copies[i].len, CUDA_MEMCPY_DEFAULT, *stream);
        if (err != CUDA_SUCCESS) goto failed;
    }
    err = g_rt.event_create(&b->event, CUDA_EVENT_DISABLE_TIMING);
    if (err != CUDA_SUCCESS) {
        b->event = NULL;
        goto failed;
    }
    err = g_rt.event_record(b->event, *stream);
    if (err != CUDA_SUCCESS) goto failed;
    return b;

failed:
    /* Copies issued before the failing call are still queued; a failed post must leave nothing
     * writing into memory the caller may reuse at once, so this one path waits for the stream. */
    g_rt.stream_synchronize(*stream);
    if (b->event) g_rt.event_destroy(b->event);
    free(b);
    *cuda_error = err;
    return NULL;
}

int emu_cuda_query(emu_cuda_batch *b) {
    int err = g_rt.event_query(b->event);
    if (err == CUDA_SUCCESS) return 1;
    if (err == CUDA_ERROR_NOT_READY) return 0;
    return -err;
}

void emu_cuda_free(emu_cuda_batch *b) {
    if (!b) return;
    /* Freeing is also how a cancelled or failed transfer is let go: wait first, so that the
     * request's memory is never released while the copy engine may still write into it. */
    g_rt.event_synchronize(b->event);
    g_rt.event_destroy(b->event);
    free(b);
}

void emu_cuda_stream_destroy(void *stream) {
    if (stream && g_rt.ok) g_rt.stream_destroy(stream);
}
