/*
 * kvreuse NIXL emulator, real-GPU copy lane.
 *
 * When a CUDA runtime is present, registered VRAM is real device memory (typically an engine's
 * region imported through CUDA IPC) and the emulator must move it with the GPU's copy engines
 * instead of memcpy. The runtime is loaded at run time, so the emulator still builds and runs on
 * machines without CUDA (CI), where VRAM stays host memory.
 */
#ifndef KVREUSE_EMULATOR_CUDA_H
#define KVREUSE_EMULATOR_CUDA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct { char *dst; const char *src; size_t len; } emu_copy_t;
typedef struct emu_cuda_batch emu_cuda_batch;

/* Lazily dlopen()s the CUDA runtime (env KVREUSE_EMU_CUDART if set, else libcudart.so.13,
 * libcudart.so.12, libcudart.so), resolves the few symbols it needs with dlsym, and checks
 * cudaGetDeviceCount > 0. Thread-safe (pthread_once). False when absent: the emulator then treats
 * VRAM as host memory. */
bool emu_cuda_available(void);

/* Issues the n copies with cudaMemcpyAsync(..., cudaMemcpyDefault, stream) on *stream (created
 * lazily, non-blocking, on the calling thread's current device, and kept by the caller for reuse),
 * then records an event (cudaEventDisableTiming). Returns NULL and sets *cuda_error on failure; in
 * that case the copies issued before the failing call have been waited out, so nothing of the
 * batch is still writing when it returns. Never synchronises on success. */
emu_cuda_batch *emu_cuda_copy_async(void **stream, const emu_copy_t *copies, size_t n, int *cuda_error);

/* 1 when the batch's event completed, 0 while running, a negative CUDA error code on failure.
 * Non-blocking (cudaEventQuery). */
int emu_cuda_query(emu_cuda_batch *b);

/* Waits for the batch (cudaEventSynchronize) and frees it. */
void emu_cuda_free(emu_cuda_batch *b);

/* Destroys a stream made by emu_cuda_copy_async (no-op for NULL). */
void emu_cuda_stream_destroy(void *stream);

#endif
