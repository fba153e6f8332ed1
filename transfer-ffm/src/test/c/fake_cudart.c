/*
 * A test stand-in for the CUDA runtime's IPC calls, for hosts without a GPU: a "handle" carries
 * the path of a shared-memory file, and "opening" it maps that file. It exports only what
 * io.kvreuse.transfer.cuda.CudaIpc binds. Never shipped: built for tests only.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct { char reserved[64]; } cudaIpcMemHandle_t;

enum { SUCCESS = 0, INVALID_VALUE = 1, MAP_FAILED_ERR = 205, INVALID_DEVICE = 101 };

#define MAX_MAPS 256
static struct { void *addr; size_t len; } maps[MAX_MAPS];
static int current_device = -1;

EXPORT int cudaSetDevice(int device) {
    if (device < 0 || device > 7) return INVALID_DEVICE;
    current_device = device;
    return SUCCESS;
}

EXPORT int cudaIpcOpenMemHandle(void **dev_ptr, cudaIpcMemHandle_t handle, unsigned int flags) {
    (void) flags;
    if (dev_ptr == NULL || current_device < 0) return INVALID_VALUE;
    char path[65];
    memcpy(path, handle.reserved, 64);
    path[64] = '\0';
    if (path[0] == '\0') return INVALID_VALUE; /* the real runtime's answer to a zeroed handle */
    int fd = open(path, O_RDWR);
    if (fd < 0) return MAP_FAILED_ERR;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) { close(fd); return MAP_FAILED_ERR; }
    void *addr = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (addr == MAP_FAILED) return MAP_FAILED_ERR;
    for (int i = 0; i < MAX_MAPS; i++) {
        if (maps[i].addr == NULL) { maps[i].addr = addr; maps[i].len = (size_t) st.st_size; *dev_ptr = addr; return SUCCESS; }
    }
    munmap(addr, (size_t) st.st_size);
    return MAP_FAILED_ERR;
}

EXPORT int cudaIpcCloseMemHandle(void *dev_ptr) {
    for (int i = 0; i < MAX_MAPS; i++) {
        if (maps[i].addr == dev_ptr && dev_ptr != NULL) {
            munmap(maps[i].addr, maps[i].len);
            maps[i].addr = NULL;
            return SUCCESS;
        }
    }
    return INVALID_VALUE;
}

EXPORT const char *cudaGetErrorString(int error) {
    switch (error) {
        case SUCCESS: return "no error";
        case INVALID_VALUE: return "invalid argument";
        case INVALID_DEVICE: return "invalid device ordinal";
        case MAP_FAILED_ERR: return "mapping of buffer object failed";
        default: return "unknown error";
    }
}
