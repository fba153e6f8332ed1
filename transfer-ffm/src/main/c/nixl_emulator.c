/*
 * kvreuse NIXL emulator: a TEST / CPU-ONLY stand-in for NVIDIA NIXL's libnixl_capi.so.
 *
 * It exports the nixl_capi_* subset the kvreuse node agent uses, with NIXL's semantics over host
 * memory, plus kvreuse_emu_* functions that only tests and benchmarks call (fault injection,
 * counters, error-code convention switch, a reference memcpy). It is written from the public
 * C-ABI signatures; no NIXL code is copied.
 *
 * Cross-process model: "GPU" memory is a file-backed shared mapping (a file under /dev/shm). At
 * registration the emulator resolves each region's backing file and offset from /proc/self/maps
 * and records them in the metadata blob, so a peer in another process can map the same bytes.
 * Notifications travel through a per-agent mailbox file guarded by flock.
 *
 * Strictness copied from NIXL 1.4 / UCX 1.22 as measured (see transfer-ffm/README.md):
 *  - Progress. An agent advances only inside its own calls, or on its progress thread when its
 *    config enables one. Each agent publishes a progress counter in a small shared file; a transfer
 *    to or from another agent starts only once that agent progressed after the post (UCX wire-up and
 *    emulated RMA need the target's worker), and a notification leaves its sender only at the
 *    sender's next progress after it was generated.
 *  - Lanes. The UCX backend parameter ucx_error_handling_mode (peer, the default, or none) decides
 *    what GPU memory may use: a loopback GPU copy takes the copy engines (cuda_copy) only in mode
 *    none, two agents of one process never get them, and another process gets cuda_ipc in either
 *    mode. The slow lane is real: it stages the bytes through a local socket, and on a loopback it
 *    runs inline in post_xfer_req, as UCX's emulated RMA did. kvreuse_emu_xfer_lane reports the lane.
 *  - GPU memory is real device memory copied with cudaMemcpyAsync when a CUDA runtime is present
 *    (emulator_cuda.c), host memory standing in for it otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator_cuda.h"

#define EXPORT __attribute__((visibility("default")))

/* C-ABI status codes (what callers see). */
enum { CAPI_SUCCESS = 0, CAPI_IN_PROG = 1, CAPI_INVALID_PARAM = -1, CAPI_BACKEND = -2,
       CAPI_INVALID_STATE = -3, CAPI_EXCEPTION = -4, CAPI_NO_TELEMETRY = -5, CAPI_NOT_FOUND = -6 };

/* NIXL core statuses (the C++ numbers), translated to C-ABI codes by to_capi(). */
enum { NX_SUCCESS = 0, NX_IN_PROG = 1, NX_NOT_POSTED = -1, NX_INVALID_PARAM = -2, NX_BACKEND = -3,
       NX_NOT_FOUND = -4, NX_MISMATCH = -5, NX_NOT_ALLOWED = -6, NX_REPOST_ACTIVE = -7,
       NX_UNKNOWN = -8, NX_NOT_SUPPORTED = -9, NX_REMOTE_DISCONNECT = -10, NX_CANCELED = -11,
       NX_NO_TELEMETRY = -12 };

enum { MEM_DRAM = 0, MEM_VRAM = 1 };
/* Lane codes as io.kvreuse.transfer.TransferLane orders them. */
enum { LANE_HOST = 0, LANE_CUDA_COPY = 1, LANE_CUDA_IPC = 2, LANE_EMULATED = 3 };
enum { OP_READ = 0, OP_WRITE = 1 };
enum { FAULT_REGISTER, FAULT_PREP, FAULT_MAKE, FAULT_POST, FAULT_STATUS, FAULT_LOAD_MD, FAULT_GET_MD,
       FAULT_COUNT };

static const char BLOB_MAGIC[8] = {'K', 'V', 'E', 'M', 'U', 'M', 'D', '1'};

/* ------------------------------------------------------------------ global emulator state */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static atomic_bool g_legacy_codes;
static int g_fault[FAULT_COUNT];
static bool g_stall;
static atomic_int g_drop_notifs;
static atomic_int g_min_polls;
static atomic_llong g_bytes_copied, g_transfers_done, g_notifs_delivered, g_notifs_dropped;

/* Older wrappers collapse every NIXL error but NO_TELEMETRY to BACKEND; newer ones pass through
 * INVALID_PARAM and NOT_FOUND. */
static int to_capi(int nx) {
    switch (nx) {
    case NX_SUCCESS: return CAPI_SUCCESS;
    case NX_IN_PROG: return CAPI_IN_PROG;
    case NX_NO_TELEMETRY: return CAPI_NO_TELEMETRY;
    case NX_INVALID_PARAM: return atomic_load(&g_legacy_codes) ? CAPI_BACKEND : CAPI_INVALID_PARAM;
    case NX_NOT_FOUND: return atomic_load(&g_legacy_codes) ? CAPI_BACKEND : CAPI_NOT_FOUND;
    default: return CAPI_BACKEND;
    }
}

/* Returns the injected NIXL status for op (consuming it), or NX_SUCCESS. */
static int take_fault(int op) {
    pthread_mutex_lock(&g_lock);
    int f = g_fault[op];
    g_fault[op] = NX_SUCCESS;
    pthread_mutex_unlock(&g_lock);
    return f;
}

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ------------------------------------------------------------------ data structures */

typedef struct { uintptr_t addr; size_t len; uint64_t dev_id; } desc_t;

typedef struct {
    int mem_type;
    size_t count, cap;
    desc_t *descs;
} dlist_t;

typedef struct {
    uintptr_t addr;
    size_t len;
    uint64_t dev_id;
    int mem_type;
    uint64_t file_offset;
    char *path; /* backing shared-memory file, or NULL for process-private memory */
    char *mapped; /* where this process reaches the bytes (remote regions only) */
    size_t map_len, map_skew;
} region_t;

typedef struct {
    char *name;
    int pid;
    void *blob;
    size_t blob_len;
    size_t count;
    region_t *regions;
    bool valid;
    _Atomic uint64_t *progress; /* the remote agent's progress counter, or NULL once it is gone */
} remote_t;

typedef struct outbox_msg { char *target; void *msg; size_t len; struct outbox_msg *next; } outbox_msg_t;

typedef struct agent {
    char *name;
    bool telemetry;
    bool has_backend;
    size_t reg_count, reg_cap;
    region_t *regs;
    size_t remote_count, remote_cap;
    remote_t **remotes; /* invalidated entries stay until destroy: in-flight copies may use them */
    char *mailbox;
    bool error_mode_none; /* ucx_error_handling_mode=none: loopback GPU copies may use the copy engines */
    char *progress_path;
    _Atomic uint64_t *progress; /* shared with other processes: bumped at every progress of this agent */
    pthread_mutex_t outbox_lock;
    outbox_msg_t *outbox_head, **outbox_tail; /* notifications generated but not yet sent */
    bool has_prog_thread;
    atomic_bool stop_prog_thread;
    uint64_t prog_delay_us;
    pthread_t prog_thread;
    void *cuda_stream;
} agent_t;

typedef struct { agent_t *agent; int backend_id; } backend_t;
typedef struct { size_t count, cap; char **keys, **values; } params_t;
typedef struct { bool has_notif; void *msg; size_t msg_len; } opt_args_t;

enum { SIDE_LOCAL, SIDE_REMOTE };
typedef struct {
    agent_t *agent;
    int side;
    remote_t *remote; /* NULL for local and loopback */
    char *peer_name;
    int mem_type;
    size_t count;
    desc_t *descs;
    char **ptrs; /* process-local pointer for each descriptor */
} prepped_t;

typedef emu_copy_t copy_t;

/* REQ_WAIT_PEER: posted, waiting for the remote agent to progress; REQ_GPU: on the copy engines. */
enum { REQ_IDLE, REQ_WAIT_PEER, REQ_QUEUED, REQ_COPYING, REQ_GPU, REQ_DONE, REQ_FAILED };
typedef struct request {
    agent_t *agent;
    int op;
    remote_t *remote;
    char *peer_name;
    size_t count;
    copy_t *copies;
    uint64_t total_bytes;
    size_t desc_count;
    int lane;
    uint64_t peer_progress_at_post;
    emu_cuda_batch *gpu;
    int state;
    int polls_left;
    bool released;
    void *notif;
    size_t notif_len;
    bool notif_pending;
    uint64_t start_us, post_us, done_us;
    struct request *next;
} request_t;

typedef struct { char *agent; size_t count, cap; void **msgs; size_t *lens; } notif_entry_t;
typedef struct { size_t count, cap; notif_entry_t *entries; } notif_map_t;

typedef struct {
    bool enable_prog_thread, enable_listen_thread;
    int listen_port, thread_sync;
    unsigned num_workers;
    uint64_t pthr_delay_us, lthr_delay_us;
    bool capture_telemetry;
} agent_config_t;

/* ------------------------------------------------------------------ small helpers */

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) abort();
    return p;
}

#define GROW(arr, count, cap)                                                                      \
    do {                                                                                           \
        if ((count) == (cap)) {                                                                    \
            (cap) = (cap) ? (cap) * 2 : 8;                                                         \
            void *grown = realloc((arr), (cap) * sizeof(*(arr)));                                  \
            if (!grown) abort();                                                                   \
            (arr) = grown;                                                                         \
        }                                                                                          \
    } while (0)

static bool covers(const region_t *r, int mem_type, const desc_t *d) {
    return r->mem_type == mem_type && r->dev_id == d->dev_id && d->addr >= r->addr
        && d->len <= r->len && d->addr - r->addr <= r->len - d->len;
}

static const region_t *find_cover(const region_t *regs, size_t n, int mem_type, const desc_t *d) {
    for (size_t i = 0; i < n; i++) {
        if (covers(&regs[i], mem_type, d)) return &regs[i];
    }
    return NULL;
}

static remote_t *find_remote(agent_t *a, const char *name) {
    for (size_t i = 0; i < a->remote_count; i++) {
        if (a->remotes[i]->valid && strcmp(a->remotes[i]->name, name) == 0) return a->remotes[i];
    }
    return NULL;
}

typedef struct pending { char *agent, *remote; struct pending *next; } pending_t;
static pending_t *g_pending;

/* Applies simulated disconnects aimed at this agent (see kvreuse_emu_disconnect). */
static void apply_disconnects(agent_t *a) {
    pthread_mutex_lock(&g_lock);
    for (pending_t **pp = &g_pending; *pp;) {
        pending_t *p = *pp;
        if (strcmp(p->agent, a->name) != 0) { pp = &p->next; continue; }
        remote_t *rm = find_remote(a, p->remote);
        if (rm) rm->valid = false;
        *pp = p->next;
        free(p->agent);
        free(p->remote);
        free(p);
    }
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------------ notification mailboxes */

static const char *mailbox_dir(void) {
    const char *dir = getenv("KVREUSE_EMU_MAILBOX_DIR");
    return dir && *dir ? dir : "/dev/shm";
}

/* Agent names are free text; per-agent file names keep only safe characters plus a hash. */
static char *agent_file(const char *kind, const char *agent) {
    uint64_t h = 1469598103934665603ull;
    char safe[64];
    size_t j = 0;
    for (const char *p = agent; *p; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
        if (j < sizeof safe - 1) {
            char c = *p;
            safe[j++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                ? c : '_';
        }
    }
    safe[j] = 0;
    char *path = NULL;
    if (asprintf(&path, "%s/kvreuse-nixl-%s-%s-%016llx", mailbox_dir(), kind, safe,
                 (unsigned long long)h) < 0) abort();
    return path;
}

static char *mailbox_path(const char *agent) { return agent_file("mbox", agent); }

/* Maps an agent's progress counter; create makes (and zeroes) the file for the agent itself. */
static _Atomic uint64_t *map_progress(const char *path, bool create) {
    int fd = open(path, create ? O_CREAT | O_TRUNC | O_RDWR : O_RDWR, 0600);
    if (fd < 0) return NULL;
    if (create && ftruncate(fd, sizeof(uint64_t)) != 0) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : (_Atomic uint64_t *)p;
}

static void unmap_progress(_Atomic uint64_t *p) {
    if (p) munmap((void *)p, sizeof(uint64_t));
}

static bool write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* Appends one record to the target's mailbox; a vanished target loses the message, as a
 * notification to a dead peer would be lost. */
static void deliver_notif(const char *target, const char *sender, const void *msg, size_t len) {
    if (atomic_load(&g_drop_notifs) > 0) {
        atomic_fetch_sub(&g_drop_notifs, 1);
        atomic_fetch_add(&g_notifs_dropped, 1);
        return;
    }
    char *path = mailbox_path(target);
    int fd = open(path, O_WRONLY | O_APPEND);
    free(path);
    if (fd < 0) return;
    uint32_t sender_len = (uint32_t)strlen(sender), msg_len = (uint32_t)len;
    flock(fd, LOCK_EX);
    bool ok = write_all(fd, &sender_len, 4) && write_all(fd, sender, sender_len)
        && write_all(fd, &msg_len, 4) && write_all(fd, msg, len);
    flock(fd, LOCK_UN);
    close(fd);
    if (ok) atomic_fetch_add(&g_notifs_delivered, 1);
}

static notif_entry_t *notif_entry(notif_map_t *m, const char *agent) {
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->entries[i].agent, agent) == 0) return &m->entries[i];
    }
    GROW(m->entries, m->count, m->cap);
    notif_entry_t *e = &m->entries[m->count++];
    memset(e, 0, sizeof *e);
    e->agent = strdup(agent);
    return e;
}

static void notif_append(notif_map_t *m, const char *agent, const char *msg, size_t len) {
    notif_entry_t *e = notif_entry(m, agent);
    if (e->count == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 4;
        e->msgs = realloc(e->msgs, e->cap * sizeof *e->msgs);
        e->lens = realloc(e->lens, e->cap * sizeof *e->lens);
        if (!e->msgs || !e->lens) abort();
    }
    e->msgs[e->count] = xcalloc(len + 1, 1);
    memcpy(e->msgs[e->count], msg, len);
    e->lens[e->count++] = len;
}

/* Reads and empties the mailbox under the lock, appending each record to the map. */
static int drain_mailbox(agent_t *a, notif_map_t *m) {
    int fd = open(a->mailbox, O_RDWR);
    if (fd < 0) return NX_BACKEND;
    flock(fd, LOCK_EX);
    struct stat st;
    fstat(fd, &st);
    size_t size = (size_t)st.st_size;
    char *buf = xcalloc(size + 1, 1);
    size_t got = 0;
    while (got < size) {
        ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (ftruncate(fd, 0) != 0) got = 0;
    flock(fd, LOCK_UN);
    close(fd);
    for (size_t off = 0; off + 8 <= got;) {
        uint32_t sender_len, msg_len;
        memcpy(&sender_len, buf + off, 4);
        char *sender = strndup(buf + off + 4, sender_len);
        off += 4 + sender_len;
        memcpy(&msg_len, buf + off, 4);
        notif_append(m, sender, buf + off + 4, msg_len);
        off += 4 + msg_len;
        free(sender);
    }
    free(buf);
    return NX_SUCCESS;
}

/* ------------------------------------------------------------------ progress */

/* A generated notification waits in the sender's outbox until the sender is progressed again. */
static void outbox_push(agent_t *a, const char *target, const void *msg, size_t len) {
    outbox_msg_t *m = xcalloc(1, sizeof *m);
    m->target = strdup(target);
    m->msg = xcalloc(len ? len : 1, 1);
    if (len) memcpy(m->msg, msg, len);
    m->len = len;
    pthread_mutex_lock(&a->outbox_lock);
    *a->outbox_tail = m;
    a->outbox_tail = &m->next;
    pthread_mutex_unlock(&a->outbox_lock);
}

static void outbox_flush(agent_t *a, bool deliver) {
    pthread_mutex_lock(&a->outbox_lock);
    outbox_msg_t *m = a->outbox_head;
    a->outbox_head = NULL;
    a->outbox_tail = &a->outbox_head;
    pthread_mutex_unlock(&a->outbox_lock);
    while (m) {
        outbox_msg_t *next = m->next;
        if (deliver) deliver_notif(m->target, a->name, m->msg, m->len);
        free(m->target);
        free(m->msg);
        free(m);
        m = next;
    }
}

/* One turn of the agent's worker: what every call on the agent and its progress thread do. */
static void progress(agent_t *a) {
    if (a->progress) atomic_fetch_add(a->progress, 1);
    outbox_flush(a, true);
}

static void *prog_thread_main(void *arg) {
    agent_t *a = arg;
    struct timespec delay = {(time_t)(a->prog_delay_us / 1000000u), (long)(a->prog_delay_us % 1000000u) * 1000};
    while (!atomic_load(&a->stop_prog_thread)) {
        progress(a);
        nanosleep(&delay, NULL);
    }
    return NULL;
}

/* Whether the remote agent of r progressed since r was posted (loopback needs no one else). */
static bool peer_progressed(const request_t *r) {
    if (!r->remote) return true;
    return r->remote->progress && atomic_load(r->remote->progress) > r->peer_progress_at_post;
}

/* ------------------------------------------------------------------ copy worker */

static request_t *g_queue_head, *g_queue_tail;

static void finish_locked(request_t *r) {
    r->done_us = now_us();
    r->state = REQ_DONE;
    atomic_fetch_add(&g_bytes_copied, (long long)r->total_bytes);
    atomic_fetch_add(&g_transfers_done, 1);
}

static pthread_once_t g_worker_once = PTHREAD_ONCE_INIT;

/* UCX's software emulation of RMA, as a real detour: every chunk goes through a local socket
 * (and through host memory when the bytes are on a GPU). Slow, and on the caller's thread. */
static void slow_copy(const copy_t *c) {
    enum { CHUNK = 64 * 1024 };
    static __thread int pair[2] = {-1, -1};
    static __thread char *out, *in;
    static __thread void *stream;
    if (pair[0] < 0) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) abort();
        out = xcalloc(CHUNK, 1);
        in = xcalloc(CHUNK, 1);
    }
    bool gpu = emu_cuda_available();
    for (size_t off = 0; off < c->len; off += CHUNK) {
        size_t n = c->len - off < CHUNK ? c->len - off : CHUNK;
        int err = 0;
        if (gpu) {
            emu_copy_t down = {out, c->src + off, n};
            emu_cuda_batch *b = emu_cuda_copy_async(&stream, &down, 1, &err);
            if (b) emu_cuda_free(b);
        } else {
            memcpy(out, c->src + off, n);
        }
        for (size_t sent = 0, got = 0; got < n;) {
            if (sent < n) {
                ssize_t w = write(pair[0], out + sent, n - sent);
                if (w > 0) sent += (size_t)w;
            }
            ssize_t rd = read(pair[1], in + got, n - got);
            if (rd > 0) got += (size_t)rd;
        }
        if (gpu) {
            emu_copy_t up = {c->dst + off, in, n};
            emu_cuda_batch *b = emu_cuda_copy_async(&stream, &up, 1, &err);
            if (b) emu_cuda_free(b);
        } else {
            memcpy(c->dst + off, in, n);
        }
    }
}

static void run_copies(request_t *r) {
    for (size_t i = 0; i < r->count; i++) {
        if (r->lane == LANE_EMULATED) slow_copy(&r->copies[i]);
        else memcpy(r->copies[i].dst, r->copies[i].src, r->copies[i].len);
    }
}

/* One process-wide worker completes posted transfers asynchronously, like a backend progress
 * thread; stalling holds it before it takes the next request. */
static void *worker_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        while (!g_queue_head || g_stall) pthread_cond_wait(&g_cond, &g_lock);
        request_t *r = g_queue_head;
        g_queue_head = r->next;
        if (!g_queue_head) g_queue_tail = NULL;
        r->next = NULL;
        r->state = REQ_COPYING;
        pthread_mutex_unlock(&g_lock);
        run_copies(r);
        pthread_mutex_lock(&g_lock);
        finish_locked(r);
        pthread_cond_broadcast(&g_cond);
    }
    return NULL;
}

static void start_worker(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker_main, NULL) != 0) abort();
    pthread_detach(t);
}

/* Cancels a request that has not started copying, or waits out a running copy; returns with r no
 * longer in the worker or on the GPU. */
static void withdraw(request_t *r) {
    pthread_mutex_lock(&g_lock);
    if (r->state == REQ_WAIT_PEER) r->state = REQ_FAILED;
    if (r->state == REQ_QUEUED) {
        request_t **pp = &g_queue_head;
        g_queue_tail = NULL;
        while (*pp) {
            if (*pp == r) *pp = r->next; else { g_queue_tail = *pp; pp = &(*pp)->next; }
        }
        r->state = REQ_FAILED;
    }
    if (r->state == REQ_GPU) { /* the copy engines cannot be recalled: wait for them */
        emu_cuda_free(r->gpu);
        r->gpu = NULL;
        r->state = REQ_FAILED;
    }
    while (r->state == REQ_COPYING) pthread_cond_wait(&g_cond, &g_lock);
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------------ region resolution */

/* Finds the file mapping holding addr in /proc/self/maps so a peer process can map it too. */
static void resolve_backing(region_t *r) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[4352];
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end, offset;
        char path[4096] = {0};
        if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095[^\n]", &start, &end, &offset, path) < 3) continue;
        if (r->addr < start || r->addr >= end) continue;
        if (path[0] == '/' && !strstr(path, "(deleted)") && r->addr + r->len <= end) {
            r->path = strdup(path);
            r->file_offset = offset + (r->addr - start);
        }
        break;
    }
    fclose(f);
}

static void map_remote_region(region_t *r, int pid) {
    if (pid == getpid()) {
        r->mapped = (char *)r->addr;
        return;
    }
    if (!r->path) return;
    int fd = open(r->path, O_RDWR);
    if (fd < 0) return;
    long page = sysconf(_SC_PAGESIZE);
    r->map_skew = r->file_offset % (uint64_t)page;
    r->map_len = r->len + r->map_skew;
    void *p = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                   (off_t)(r->file_offset - r->map_skew));
    close(fd);
    if (p != MAP_FAILED) r->mapped = (char *)p + r->map_skew;
}

static void free_remote(remote_t *rm, bool same_process) {
    for (size_t i = 0; i < rm->count; i++) {
        region_t *r = &rm->regions[i];
        if (!same_process && r->mapped) munmap(r->mapped - r->map_skew, r->map_len);
        free(r->path);
    }
    unmap_progress(rm->progress);
    free(rm->regions);
    free(rm->name);
    free(rm->blob);
    free(rm);
}

/* ------------------------------------------------------------------ metadata blob codec */

typedef struct { char *buf; size_t len, cap; } writer_t;

static void put(writer_t *w, const void *p, size_t n) {
    while (w->len + n > w->cap) {
        w->cap = w->cap ? w->cap * 2 : 256;
        w->buf = realloc(w->buf, w->cap);
        if (!w->buf) abort();
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void put_u32(writer_t *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(writer_t *w, uint64_t v) { put(w, &v, 8); }
static void put_str(writer_t *w, const char *s) {
    uint32_t n = s ? (uint32_t)strlen(s) : 0;
    put_u32(w, n);
    if (n) put(w, s, n);
}

typedef struct { const char *buf; size_t len, off; bool bad; } reader_t;

static const void *take(reader_t *r, size_t n) {
    if (r->bad || r->len - r->off < n) { r->bad = true; return NULL; }
    const void *p = r->buf + r->off;
    r->off += n;
    return p;
}
static uint32_t get_u32(reader_t *r) { uint32_t v = 0; const void *p = take(r, 4); if (p) memcpy(&v, p, 4); return v; }
static uint64_t get_u64(reader_t *r) { uint64_t v = 0; const void *p = take(r, 8); if (p) memcpy(&v, p, 8); return v; }
static char *get_str(reader_t *r) {
    uint32_t n = get_u32(r);
    const char *p = take(r, n);
    return p && n ? strndup(p, n) : NULL;
}

static void encode_md(agent_t *a, writer_t *w) {
    put(w, BLOB_MAGIC, sizeof BLOB_MAGIC);
    put_u32(w, (uint32_t)getpid());
    put_str(w, a->name);
    put_u32(w, (uint32_t)a->reg_count);
    for (size_t i = 0; i < a->reg_count; i++) {
        region_t *r = &a->regs[i];
        put_u64(w, r->addr);
        put_u64(w, r->len);
        put_u64(w, r->dev_id);
        put_u32(w, (uint32_t)r->mem_type);
        put_u64(w, r->file_offset);
        put_str(w, r->path);
    }
}

static remote_t *decode_md(const void *data, size_t len) {
    reader_t rd = {data, len, 0, false};
    const void *magic = take(&rd, sizeof BLOB_MAGIC);
    if (!magic || memcmp(magic, BLOB_MAGIC, sizeof BLOB_MAGIC) != 0) return NULL;
    remote_t *rm = xcalloc(1, sizeof *rm);
    rm->pid = (int)get_u32(&rd);
    rm->name = get_str(&rd);
    rm->count = get_u32(&rd);
    rm->regions = rd.bad || rm->count > len ? NULL : xcalloc(rm->count, sizeof *rm->regions);
    for (size_t i = 0; rm->regions && i < rm->count && !rd.bad; i++) {
        region_t *r = &rm->regions[i];
        r->addr = get_u64(&rd);
        r->len = get_u64(&rd);
        r->dev_id = get_u64(&rd);
        r->mem_type = (int)get_u32(&rd);
        r->file_offset = get_u64(&rd);
        r->path = get_str(&rd);
    }
    if (rd.bad || !rm->name || !rm->regions) {
        if (!rm->regions) rm->count = 0;
        free_remote(rm, true);
        return NULL;
    }
    rm->valid = true;
    rm->blob = xcalloc(len, 1);
    memcpy(rm->blob, data, len);
    rm->blob_len = len;
    return rm;
}

/* ================================================================== exported C ABI: agent */

static int create_agent_impl(const char *name, bool telemetry, bool prog_thread, uint64_t prog_delay_us,
                             agent_t **out) {
    if (!name || !out) return CAPI_INVALID_PARAM;
    if (!*name) return to_capi(NX_INVALID_PARAM);
    agent_t *a = xcalloc(1, sizeof *a);
    a->name = strdup(name);
    a->telemetry = telemetry || (getenv("NIXL_TELEMETRY_ENABLE") && *getenv("NIXL_TELEMETRY_ENABLE") == 'y');
    a->mailbox = mailbox_path(name);
    int fd = open(a->mailbox, O_CREAT | O_TRUNC | O_RDWR, 0600);
    if (fd >= 0) close(fd);
    a->progress_path = agent_file("prog", name);
    a->progress = map_progress(a->progress_path, true);
    pthread_mutex_init(&a->outbox_lock, NULL);
    a->outbox_tail = &a->outbox_head;
    /* NIXL's own default delay is 0 (it sleeps on UCX's wakeup fd); the emulator has no such fd. */
    a->prog_delay_us = prog_delay_us ? prog_delay_us : 1000;
    if (prog_thread) {
        a->has_prog_thread = pthread_create(&a->prog_thread, NULL, prog_thread_main, a) == 0;
    }
    *out = a;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_create_configured_agent(const char *name, const agent_config_t *cfg, agent_t **agent) {
    if (!cfg) return CAPI_INVALID_PARAM;
    return create_agent_impl(name, cfg->capture_telemetry, cfg->enable_prog_thread, cfg->pthr_delay_us, agent);
}

/* Like the real wrapper, the config-less constructor turns the progress thread on. */
EXPORT int nixl_capi_create_agent(const char *name, agent_t **agent) {
    return create_agent_impl(name, false, true, 0, agent);
}

EXPORT int nixl_capi_destroy_agent(agent_t *a) {
    if (!a) return CAPI_INVALID_PARAM;
    if (a->has_prog_thread) {
        atomic_store(&a->stop_prog_thread, true);
        pthread_join(a->prog_thread, NULL);
    }
    outbox_flush(a, false); /* never sent: the agent is gone */
    pthread_mutex_destroy(&a->outbox_lock);
    unlink(a->mailbox);
    unmap_progress(a->progress);
    unlink(a->progress_path);
    emu_cuda_stream_destroy(a->cuda_stream);
    for (size_t i = 0; i < a->remote_count; i++) free_remote(a->remotes[i], a->remotes[i]->pid == getpid());
    for (size_t i = 0; i < a->reg_count; i++) free(a->regs[i].path);
    free(a->remotes);
    free(a->regs);
    free(a->mailbox);
    free(a->progress_path);
    free(a->name);
    free(a);
    return CAPI_SUCCESS;
}

/* ================================================================== params, backends, opt args */

EXPORT int nixl_capi_create_params(params_t **params) {
    if (!params) return CAPI_INVALID_PARAM;
    *params = xcalloc(1, sizeof **params);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_params_add(params_t *params, const char *key, const char *value) {
    if (!params || !key || !value) return CAPI_INVALID_PARAM;
    if (params->count == params->cap) {
        params->cap = params->cap ? params->cap * 2 : 4;
        params->keys = realloc(params->keys, params->cap * sizeof *params->keys);
        params->values = realloc(params->values, params->cap * sizeof *params->values);
        if (!params->keys || !params->values) abort();
    }
    params->keys[params->count] = strdup(key);
    params->values[params->count++] = strdup(value);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_destroy_params(params_t *params) {
    if (!params) return CAPI_INVALID_PARAM;
    for (size_t i = 0; i < params->count; i++) {
        free(params->keys[i]);
        free(params->values[i]);
    }
    free(params->keys);
    free(params->values);
    free(params);
    return CAPI_SUCCESS;
}

static const char *param(const params_t *params, const char *key) {
    for (size_t i = 0; params && i < params->count; i++) {
        if (strcmp(params->keys[i], key) == 0) return params->values[i];
    }
    return NULL;
}

/* Only UCX is emulated; like the real wrapper, any failure here is reported as BACKEND, including
 * an error mode UCX does not know. */
EXPORT int nixl_capi_create_backend(agent_t *a, const char *plugin, params_t *params, backend_t **backend) {
    if (!a || !plugin || !backend) return CAPI_INVALID_PARAM;
    if (strcmp(plugin, "UCX") != 0 || a->has_backend) return CAPI_BACKEND;
    const char *mode = param(params, "ucx_error_handling_mode");
    if (mode && strcmp(mode, "peer") != 0 && strcmp(mode, "none") != 0) return CAPI_BACKEND;
    a->error_mode_none = mode && strcmp(mode, "none") == 0;
    a->has_backend = true;
    backend_t *b = xcalloc(1, sizeof *b);
    b->agent = a;
    *backend = b;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_destroy_backend(backend_t *b) {
    if (!b) return CAPI_INVALID_PARAM;
    free(b);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_create_opt_args(opt_args_t **args) {
    if (!args) return CAPI_INVALID_PARAM;
    *args = xcalloc(1, sizeof **args);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_destroy_opt_args(opt_args_t *args) {
    if (!args) return CAPI_INVALID_PARAM;
    free(args->msg);
    free(args);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_opt_args_add_backend(opt_args_t *args, backend_t *b) {
    return args && b ? CAPI_SUCCESS : CAPI_INVALID_PARAM;
}

EXPORT int nixl_capi_opt_args_set_notif_msg(opt_args_t *args, const void *data, size_t len) {
    if (!args || (!data && len)) return CAPI_INVALID_PARAM;
    free(args->msg);
    args->msg = xcalloc(len, 1);
    if (len) memcpy(args->msg, data, len);
    args->msg_len = len;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_opt_args_set_has_notif(opt_args_t *args, bool has_notif) {
    if (!args) return CAPI_INVALID_PARAM;
    args->has_notif = has_notif;
    return CAPI_SUCCESS;
}

/* ================================================================== descriptor lists */

static int dlist_create(int mem_type, dlist_t **out) {
    if (!out) return CAPI_INVALID_PARAM;
    *out = xcalloc(1, sizeof **out);
    (*out)->mem_type = mem_type;
    return CAPI_SUCCESS;
}

static int dlist_add(dlist_t *d, uintptr_t addr, size_t len, uint64_t dev_id) {
    if (!d) return CAPI_INVALID_PARAM;
    GROW(d->descs, d->count, d->cap);
    d->descs[d->count++] = (desc_t){addr, len, dev_id};
    return CAPI_SUCCESS;
}

static int dlist_destroy(dlist_t *d) {
    if (!d) return CAPI_INVALID_PARAM;
    free(d->descs);
    free(d);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_create_xfer_dlist(int mem_type, dlist_t **d) { return dlist_create(mem_type, d); }
EXPORT int nixl_capi_destroy_xfer_dlist(dlist_t *d) { return dlist_destroy(d); }
EXPORT int nixl_capi_xfer_dlist_add_desc(dlist_t *d, uintptr_t addr, size_t len, uint64_t dev_id) {
    return dlist_add(d, addr, len, dev_id);
}
EXPORT int nixl_capi_xfer_dlist_desc_count(dlist_t *d, size_t *count) {
    if (!d || !count) return CAPI_INVALID_PARAM;
    *count = d->count;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_create_reg_dlist(int mem_type, dlist_t **d) { return dlist_create(mem_type, d); }
EXPORT int nixl_capi_destroy_reg_dlist(dlist_t *d) { return dlist_destroy(d); }
EXPORT int nixl_capi_reg_dlist_add_desc(dlist_t *d, uintptr_t addr, size_t len, uint64_t dev_id,
                                        const void *metadata, size_t metadata_len) {
    (void)metadata;
    (void)metadata_len;
    return dlist_add(d, addr, len, dev_id);
}

/* ================================================================== registration */

EXPORT int nixl_capi_register_mem(agent_t *a, dlist_t *d, opt_args_t *opt) {
    (void)opt;
    if (!a || !d) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    int fault = take_fault(FAULT_REGISTER);
    if (fault) return to_capi(fault);
    if (!a->has_backend || (d->mem_type != MEM_DRAM && d->mem_type != MEM_VRAM)) return to_capi(NX_NOT_FOUND);
    for (size_t i = 0; i < d->count; i++) {
        if (d->descs[i].addr == 0 || d->descs[i].len == 0) return to_capi(NX_INVALID_PARAM);
    }
    for (size_t i = 0; i < d->count; i++) {
        GROW(a->regs, a->reg_count, a->reg_cap);
        region_t *r = &a->regs[a->reg_count++];
        memset(r, 0, sizeof *r);
        r->addr = d->descs[i].addr;
        r->len = d->descs[i].len;
        r->dev_id = d->descs[i].dev_id;
        r->mem_type = d->mem_type;
        resolve_backing(r);
    }
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_deregister_mem(agent_t *a, dlist_t *d, opt_args_t *opt) {
    (void)opt;
    if (!a || !d) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    for (size_t i = 0; i < d->count; i++) {
        size_t j = 0;
        while (j < a->reg_count && !(a->regs[j].addr == d->descs[i].addr && a->regs[j].len == d->descs[i].len
                                     && a->regs[j].dev_id == d->descs[i].dev_id
                                     && a->regs[j].mem_type == d->mem_type)) j++;
        if (j == a->reg_count) return to_capi(NX_INVALID_PARAM);
        free(a->regs[j].path);
        a->regs[j] = a->regs[--a->reg_count];
    }
    return CAPI_SUCCESS;
}

/* ================================================================== metadata */

EXPORT int nixl_capi_get_local_md(agent_t *a, void **data, size_t *len) {
    if (!a || !data || !len) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    int fault = take_fault(FAULT_GET_MD);
    if (fault) return to_capi(fault);
    if (!a->has_backend) return to_capi(NX_INVALID_PARAM);
    writer_t w = {0};
    encode_md(a, &w);
    *data = w.buf;
    *len = w.len;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_load_remote_md(agent_t *a, const void *data, size_t len, char **agent_name) {
    if (!a || !data || !agent_name) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    int fault = take_fault(FAULT_LOAD_MD);
    if (fault) return to_capi(fault);
    remote_t *rm = decode_md(data, len);
    if (!rm) return to_capi(NX_INVALID_PARAM);
    int status = NX_SUCCESS;
    remote_t *known = find_remote(a, rm->name);
    if (strcmp(rm->name, a->name) == 0) {
        status = NX_INVALID_PARAM;
    } else if (known && (known->blob_len != len || memcmp(known->blob, data, len) != 0)) {
        status = NX_NOT_ALLOWED;
    }
    if (status != NX_SUCCESS || known) {
        if (status == NX_SUCCESS) *agent_name = strdup(known->name);
        free_remote(rm, true);
        return to_capi(status);
    }
    for (size_t i = 0; i < rm->count; i++) map_remote_region(&rm->regions[i], rm->pid);
    char *progress_path = agent_file("prog", rm->name);
    rm->progress = map_progress(progress_path, false); /* NULL: the peer is gone and never progresses */
    free(progress_path);
    GROW(a->remotes, a->remote_count, a->remote_cap);
    a->remotes[a->remote_count++] = rm;
    *agent_name = strdup(rm->name);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_invalidate_remote_md(agent_t *a, const char *remote_agent) {
    if (!a || !remote_agent) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    remote_t *rm = find_remote(a, remote_agent);
    if (!rm) return to_capi(NX_NOT_FOUND);
    rm->valid = false;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_check_remote_md(agent_t *a, const char *remote_name, dlist_t *descs) {
    if (!a || !remote_name) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    apply_disconnects(a);
    remote_t *rm = find_remote(a, remote_name);
    if (!rm) return to_capi(NX_NOT_FOUND);
    for (size_t i = 0; descs && i < descs->count; i++) {
        if (!find_cover(rm->regions, rm->count, descs->mem_type, &descs->descs[i])) return to_capi(NX_NOT_FOUND);
    }
    return CAPI_SUCCESS;
}

/* ================================================================== transfer preparation */

/* Resolves every descriptor to a process-local pointer inside a covering registration. */
static int resolve_list(agent_t *a, const char *peer, dlist_t *d, remote_t **remote_out, char **ptrs) {
    const region_t *regs = a->regs;
    size_t n = a->reg_count;
    *remote_out = NULL;
    if (peer && *peer && strcmp(peer, a->name) != 0) {
        remote_t *rm = find_remote(a, peer);
        if (!rm) return NX_NOT_FOUND;
        regs = rm->regions;
        n = rm->count;
        *remote_out = rm;
    }
    for (size_t i = 0; i < d->count; i++) {
        const region_t *r = find_cover(regs, n, d->mem_type, &d->descs[i]);
        if (!r) return NX_INVALID_PARAM;
        char *base = *remote_out ? r->mapped : (char *)r->addr;
        if (!base) return NX_BACKEND;
        ptrs[i] = base + (d->descs[i].addr - r->addr);
    }
    return NX_SUCCESS;
}

EXPORT int nixl_capi_prep_xfer_dlist(agent_t *a, const char *agent_name, dlist_t *d, prepped_t **hndl,
                                     opt_args_t *opt) {
    (void)opt;
    if (!a || !agent_name || !d || !hndl) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    apply_disconnects(a);
    int fault = take_fault(FAULT_PREP);
    if (fault) return to_capi(fault);
    prepped_t *p = xcalloc(1, sizeof *p);
    p->ptrs = xcalloc(d->count, sizeof *p->ptrs);
    int status = resolve_list(a, agent_name, d, &p->remote, p->ptrs);
    if (status != NX_SUCCESS) {
        free(p->ptrs);
        free(p);
        return to_capi(status);
    }
    p->agent = a;
    p->side = *agent_name ? SIDE_REMOTE : SIDE_LOCAL;
    p->mem_type = d->mem_type;
    p->peer_name = strdup(agent_name);
    p->count = d->count;
    p->descs = xcalloc(d->count, sizeof *p->descs);
    memcpy(p->descs, d->descs, d->count * sizeof *p->descs);
    *hndl = p;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_release_xfer_dlist_handle(agent_t *a, prepped_t *p) {
    if (!a || !p) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    free(p->ptrs);
    free(p->descs);
    free(p->peer_name);
    free(p);
    return CAPI_SUCCESS;
}

/* UCX's lane choice for GPU memory (see the header comment); host memory is always fast. */
static int choose_lane(const agent_t *a, const remote_t *remote, bool gpu) {
    if (!gpu) return LANE_HOST;
    if (!remote) return a->error_mode_none ? LANE_CUDA_COPY : LANE_EMULATED;
    return remote->pid == getpid() ? LANE_EMULATED : LANE_CUDA_IPC;
}

static request_t *new_request(agent_t *a, int op, remote_t *remote, const char *peer, size_t n, bool gpu) {
    request_t *r = xcalloc(1, sizeof *r);
    r->agent = a;
    r->lane = choose_lane(a, remote, gpu);
    r->op = op;
    r->remote = remote;
    r->peer_name = strdup(*peer ? peer : a->name);
    r->copies = xcalloc(n, sizeof *r->copies);
    r->desc_count = n;
    return r;
}

/* Adds one copy, merging it into the previous one when both sides are contiguous, as NIXL does. */
static void add_copy(request_t *r, char *local, char *remote, size_t len) {
    char *dst = r->op == OP_READ ? local : remote;
    const char *src = r->op == OP_READ ? remote : local;
    r->total_bytes += len;
    if (r->count > 0) {
        copy_t *last = &r->copies[r->count - 1];
        if (last->dst + last->len == dst && last->src + last->len == src) {
            last->len += len;
            return;
        }
    }
    r->copies[r->count++] = (copy_t){dst, src, len};
}

EXPORT int nixl_capi_make_xfer_req(agent_t *a, int op, prepped_t *local, const int *local_idx, size_t n_local,
                                   prepped_t *remote, const int *remote_idx, size_t n_remote, request_t **req,
                                   opt_args_t *opt) {
    (void)opt;
    if (!a || !local || !remote || !local_idx || !remote_idx || !req) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    apply_disconnects(a);
    int fault = take_fault(FAULT_MAKE);
    if (fault) return to_capi(fault);
    if (local->side != SIDE_LOCAL || remote->side != SIDE_REMOTE || (op != OP_READ && op != OP_WRITE)
        || n_local != n_remote || n_local == 0) {
        return to_capi(NX_INVALID_PARAM);
    }
    if (remote->remote && !remote->remote->valid) return to_capi(NX_NOT_FOUND);
    for (size_t i = 0; i < n_local; i++) {
        int li = local_idx[i], ri = remote_idx[i];
        if (li < 0 || (size_t)li >= local->count || ri < 0 || (size_t)ri >= remote->count
            || local->descs[li].len != remote->descs[ri].len) {
            return to_capi(NX_INVALID_PARAM);
        }
    }
    bool gpu = local->mem_type == MEM_VRAM || remote->mem_type == MEM_VRAM;
    request_t *r = new_request(a, op, remote->remote, remote->peer_name, n_local, gpu);
    for (size_t i = 0; i < n_local; i++) {
        add_copy(r, local->ptrs[local_idx[i]], remote->ptrs[remote_idx[i]], local->descs[local_idx[i]].len);
    }
    *req = r;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_create_xfer_req(agent_t *a, int op, dlist_t *local, dlist_t *remote, const char *remote_agent,
                                     request_t **req, opt_args_t *opt) {
    (void)opt;
    if (!a || !local || !remote || !remote_agent || !req) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    if (local->count != remote->count || local->count == 0 || !*remote_agent) return CAPI_BACKEND;
    char **lp = xcalloc(local->count, sizeof *lp), **rp = xcalloc(remote->count, sizeof *rp);
    remote_t *unused, *rm;
    int status = resolve_list(a, "", local, &unused, lp);
    if (status == NX_SUCCESS) status = resolve_list(a, remote_agent, remote, &rm, rp);
    for (size_t i = 0; status == NX_SUCCESS && i < local->count; i++) {
        if (local->descs[i].len != remote->descs[i].len) status = NX_INVALID_PARAM;
    }
    if (status == NX_SUCCESS) {
        bool gpu = local->mem_type == MEM_VRAM || remote->mem_type == MEM_VRAM;
        request_t *r = new_request(a, op, rm, remote_agent, local->count, gpu);
        for (size_t i = 0; i < local->count; i++) add_copy(r, lp[i], rp[i], local->descs[i].len);
        *req = r;
    }
    free(lp);
    free(rp);
    return status == NX_SUCCESS ? CAPI_SUCCESS : CAPI_BACKEND;
}

/* ================================================================== transfer execution */

/* Puts a posted request on its lane once its peer can take part. Called with g_lock held. */
static void start_locked(request_t *r) {
    if (r->lane == LANE_CUDA_COPY || r->lane == LANE_CUDA_IPC) {
        if (emu_cuda_available()) {
            int err = 0;
            r->gpu = emu_cuda_copy_async(&r->agent->cuda_stream, r->copies, r->count, &err);
            r->state = r->gpu ? REQ_GPU : REQ_FAILED;
            return;
        }
    }
    pthread_once(&g_worker_once, start_worker);
    r->state = REQ_QUEUED;
    if (g_queue_tail) g_queue_tail->next = r; else g_queue_head = r;
    g_queue_tail = r;
    pthread_cond_broadcast(&g_cond);
}

EXPORT int nixl_capi_post_xfer_req(agent_t *a, request_t *r, opt_args_t *opt) {
    if (!a || !r || r->released) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    apply_disconnects(a);
    pthread_mutex_lock(&g_lock);
    int state = r->state;
    pthread_mutex_unlock(&g_lock);
    if (state == REQ_WAIT_PEER || state == REQ_QUEUED || state == REQ_COPYING || state == REQ_GPU) {
        return to_capi(NX_REPOST_ACTIVE);
    }
    if (r->remote && !r->remote->valid) return to_capi(NX_NOT_FOUND);
    int fault = take_fault(FAULT_POST);
    if (fault) return to_capi(fault);
    free(r->notif);
    r->notif = NULL;
    r->notif_pending = opt && opt->has_notif;
    if (r->notif_pending) {
        r->notif_len = opt->msg_len;
        r->notif = xcalloc(opt->msg_len ? opt->msg_len : 1, 1);
        memcpy(r->notif, opt->msg, opt->msg_len);
    }
    r->polls_left = atomic_load(&g_min_polls);
    r->start_us = now_us();
    if (r->lane == LANE_EMULATED && !r->remote) {
        /* UCX's emulated loopback RMA runs inside the post: the caller's thread does the copy */
        run_copies(r);
        pthread_mutex_lock(&g_lock);
        finish_locked(r);
        pthread_mutex_unlock(&g_lock);
        r->post_us = now_us();
        if (r->notif_pending) {
            r->notif_pending = false;
            outbox_push(a, r->peer_name, r->notif, r->notif_len);
        }
        return CAPI_SUCCESS;
    }
    pthread_mutex_lock(&g_lock);
    r->peer_progress_at_post = r->remote && r->remote->progress ? atomic_load(r->remote->progress) : 0;
    r->state = REQ_WAIT_PEER;
    if (peer_progressed(r) && !r->remote) start_locked(r);
    pthread_mutex_unlock(&g_lock);
    r->post_us = now_us();
    return CAPI_IN_PROG;
}

/* Completion is observed only here, and only here is the notification generated, as in UCX; it
 * leaves at the initiator's next progress. */
EXPORT int nixl_capi_get_xfer_status(agent_t *a, request_t *r) {
    if (!a || !r || r->released) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    apply_disconnects(a);
    int fault = take_fault(FAULT_STATUS);
    if (fault) return to_capi(fault);
    pthread_mutex_lock(&g_lock);
    if (r->state == REQ_WAIT_PEER && peer_progressed(r)) start_locked(r);
    if (r->state == REQ_GPU) {
        int done = emu_cuda_query(r->gpu);
        if (done != 0) {
            emu_cuda_free(r->gpu);
            r->gpu = NULL;
            if (done > 0) finish_locked(r); else r->state = REQ_FAILED;
        }
    }
    int state = r->state;
    pthread_mutex_unlock(&g_lock);
    if (state == REQ_IDLE) return to_capi(NX_NOT_POSTED);
    if (state == REQ_FAILED) return to_capi(NX_CANCELED);
    if (r->remote && !r->remote->valid) return to_capi(NX_NOT_FOUND);
    if (state != REQ_DONE) return CAPI_IN_PROG;
    if (r->polls_left > 0) {
        r->polls_left--;
        return CAPI_IN_PROG;
    }
    if (r->notif_pending) {
        r->notif_pending = false;
        outbox_push(a, r->peer_name, r->notif, r->notif_len);
    }
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_release_xfer_req(agent_t *a, request_t *r) {
    if (!a || !r || r->released) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    withdraw(r);
    r->released = true;
    free(r->copies);
    r->copies = NULL;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_destroy_xfer_req(request_t *r) {
    if (!r) return CAPI_INVALID_PARAM;
    if (!r->released) return CAPI_INVALID_STATE;
    free(r->notif);
    free(r->peer_name);
    free(r);
    return CAPI_SUCCESS;
}

struct nixl_capi_xfer_telemetry_s {
    uint64_t start_time_us, post_duration_us, xfer_duration_us, total_bytes, desc_count;
};

EXPORT int nixl_capi_get_xfer_telemetry(agent_t *a, request_t *r, struct nixl_capi_xfer_telemetry_s *out) {
    if (!a || !r || !out || r->released) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    if (!a->telemetry) return CAPI_NO_TELEMETRY;
    pthread_mutex_lock(&g_lock);
    int state = r->state;
    uint64_t done = r->done_us;
    pthread_mutex_unlock(&g_lock);
    out->start_time_us = r->start_us;
    out->post_duration_us = r->post_us - r->start_us;
    out->xfer_duration_us = state == REQ_DONE ? done - r->start_us : 0;
    out->total_bytes = r->total_bytes;
    out->desc_count = r->count; /* after merging, as NIXL counts */
    if (state == REQ_IDLE) return to_capi(NX_NOT_POSTED);
    return state == REQ_DONE ? CAPI_SUCCESS : CAPI_IN_PROG;
}

/* ================================================================== notifications */

EXPORT int nixl_capi_create_notif_map(notif_map_t **m) {
    if (!m) return CAPI_INVALID_PARAM;
    *m = xcalloc(1, sizeof **m);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_notif_map_clear(notif_map_t *m) {
    if (!m) return CAPI_INVALID_PARAM;
    for (size_t i = 0; i < m->count; i++) {
        for (size_t j = 0; j < m->entries[i].count; j++) free(m->entries[i].msgs[j]);
        free(m->entries[i].msgs);
        free(m->entries[i].lens);
        free(m->entries[i].agent);
    }
    m->count = 0;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_destroy_notif_map(notif_map_t *m) {
    if (!m) return CAPI_INVALID_PARAM;
    nixl_capi_notif_map_clear(m);
    free(m->entries);
    free(m);
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_get_notifs(agent_t *a, notif_map_t *m, opt_args_t *opt) {
    (void)opt;
    if (!a || !m) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    return to_capi(drain_mailbox(a, m));
}

EXPORT int nixl_capi_gen_notif(agent_t *a, const char *remote_agent, const void *data, size_t len, opt_args_t *opt) {
    (void)opt;
    if (!a || !remote_agent || (!data && len)) return CAPI_INVALID_PARAM;
    progress(a); /* every call on an agent advances its worker, as in UCX */
    apply_disconnects(a);
    if (strcmp(remote_agent, a->name) != 0 && !find_remote(a, remote_agent)) return to_capi(NX_NOT_FOUND);
    outbox_push(a, remote_agent, data, len); /* leaves at the sender's next progress, as in UCX */
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_notif_map_size(notif_map_t *m, size_t *size) {
    if (!m || !size) return CAPI_INVALID_PARAM;
    *size = m->count;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_notif_map_get_agent_at(notif_map_t *m, size_t i, const char **name) {
    if (!m || !name || i >= m->count) return CAPI_INVALID_PARAM;
    *name = m->entries[i].agent;
    return CAPI_SUCCESS;
}

EXPORT int nixl_capi_notif_map_get_notifs_size(notif_map_t *m, const char *agent, size_t *size) {
    if (!m || !agent || !size) return CAPI_INVALID_PARAM;
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->entries[i].agent, agent) == 0) {
            *size = m->entries[i].count;
            return CAPI_SUCCESS;
        }
    }
    return to_capi(NX_NOT_FOUND);
}

EXPORT int nixl_capi_notif_map_get_notif(notif_map_t *m, const char *agent, size_t i, const void **data, size_t *len) {
    size_t n;
    int status = nixl_capi_notif_map_get_notifs_size(m, agent, &n);
    if (status != CAPI_SUCCESS) return status;
    if (!data || !len || i >= n) return CAPI_INVALID_PARAM;
    notif_entry_t *e = notif_entry(m, agent);
    *data = e->msgs[i];
    *len = e->lens[i];
    return CAPI_SUCCESS;
}

EXPORT bool nixl_capi_is_stub(void) { return false; }

/* ================================================================== kvreuse_emu_*: test control */

__attribute__((constructor)) static void read_environment(void) {
    const char *conv = getenv("KVREUSE_EMU_ERROR_CONVENTION");
    atomic_store(&g_legacy_codes, conv && strcmp(conv, "legacy") == 0);
}

/* legacy != 0 selects the v1.4.0 convention that collapses errors to BACKEND (-2). */
EXPORT void kvreuse_emu_set_legacy_error_codes(int legacy) { atomic_store(&g_legacy_codes, legacy != 0); }

/* Makes the next call of operation op fail with the given NIXL core status (e.g. -4 NOT_FOUND). */
EXPORT int kvreuse_emu_fail_next(int op, int nixl_status) {
    if (op < 0 || op >= FAULT_COUNT || nixl_status >= 0) return CAPI_INVALID_PARAM;
    pthread_mutex_lock(&g_lock);
    g_fault[op] = nixl_status;
    pthread_mutex_unlock(&g_lock);
    return CAPI_SUCCESS;
}

EXPORT void kvreuse_emu_stall_transfers(int stall) {
    pthread_mutex_lock(&g_lock);
    g_stall = stall != 0;
    pthread_cond_broadcast(&g_cond);
    pthread_mutex_unlock(&g_lock);
}

EXPORT void kvreuse_emu_drop_notifications(int count) { atomic_store(&g_drop_notifs, count); }

/* Completed transfers report IN_PROG for this many extra status polls. */
EXPORT void kvreuse_emu_set_min_polls(int polls) { atomic_store(&g_min_polls, polls); }

/* Simulates a remote disconnect: the named agent forgets remote_agent at its next call, as NIXL
 * does after the backend reports REMOTE_DISCONNECT. Deferred so only the agent's thread touches it. */
EXPORT int kvreuse_emu_disconnect(const char *agent_name, const char *remote_agent) {
    if (!agent_name || !remote_agent) return CAPI_INVALID_PARAM;
    pending_t *p = xcalloc(1, sizeof *p);
    p->agent = strdup(agent_name);
    p->remote = strdup(remote_agent);
    pthread_mutex_lock(&g_lock);
    p->next = g_pending;
    g_pending = p;
    pthread_mutex_unlock(&g_lock);
    return CAPI_SUCCESS;
}

EXPORT void kvreuse_emu_reset(void) {
    kvreuse_emu_stall_transfers(0);
    pthread_mutex_lock(&g_lock);
    memset(g_fault, 0, sizeof g_fault);
    pthread_mutex_unlock(&g_lock);
    atomic_store(&g_drop_notifs, 0);
    atomic_store(&g_min_polls, 0);
    atomic_store(&g_bytes_copied, 0);
    atomic_store(&g_transfers_done, 0);
    atomic_store(&g_notifs_delivered, 0);
    atomic_store(&g_notifs_dropped, 0);
    read_environment();
}

/* The lane a request was given (LANE_* codes); io.kvreuse.transfer reports it in its telemetry. */
EXPORT int kvreuse_emu_xfer_lane(const request_t *r) { return r ? r->lane : -1; }

EXPORT int64_t kvreuse_emu_bytes_copied(void) { return atomic_load(&g_bytes_copied); }
EXPORT int64_t kvreuse_emu_transfers_completed(void) { return atomic_load(&g_transfers_done); }
EXPORT int64_t kvreuse_emu_notifications_delivered(void) { return atomic_load(&g_notifs_delivered); }
EXPORT int64_t kvreuse_emu_notifications_dropped(void) { return atomic_load(&g_notifs_dropped); }

/* Reference for the benchmark: the same memcpy the worker uses, repeated, timed in C (ns). */
EXPORT int64_t kvreuse_emu_bench_memcpy(void *dst, const void *src, size_t len, int repetitions) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < repetitions; i++) {
        memcpy(dst, src, len);
        __asm__ __volatile__("" : : "r"(dst) : "memory");
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
}
