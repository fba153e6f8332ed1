// kvreuse GPU tier: a stand-in for an inference engine's KV-cache memory.
//
// A real engine (vLLM, SGLang, ...) owns its KV cache in GPU memory and hands the node agent CUDA
// IPC handles to it. This program does the same with two plain allocations on one GPU: a source
// bank, filled with a known pattern, and a destination region, zeroed. The node agent's transfer
// path (transfer-ffm, running in another process, since CUDA IPC refuses to open a handle in the
// process that exported it) imports both, moves blocks, and asks this program to check the result
// on the GPU, where the bytes are.
//
// Usage: standin_engine <device> <source bytes> <destination bytes> <block bytes>
// Prints one line
//   ENGINE device=<d> block_bytes=<b> src_bytes=<n> src_handle=<base64url> dst_bytes=<n> dst_handle=<base64url>
// then answers one line per command read from stdin:
//   VERIFY <dst>:<src>:<count> ...  every destination byte equals the source pattern where the runs
//                                   (destination block, source block, block count) put it, and
//                                   every other destination block is still zero:
//                                   "OK <bytes checked>" or "MISMATCH <offset> expected <e> got <g>"
//   ZERO                            zeroes the destination again: "OK <bytes>"
//   EXIT                            (or end of input) frees everything and exits 0
// Any CUDA failure prints "ERROR <call>: <code> <text>" and exits 2.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void check(cudaError_t err, const char *call) {
    if (err != cudaSuccess) {
        std::printf("ERROR %s: %d %s\n", call, (int)err, cudaGetErrorString(err));
        std::fflush(stdout);
        std::exit(2);
    }
}

// Every source byte differs from its neighbours and from the same offset in other blocks, so a
// block copied to the wrong slot, a shifted copy or a partial one cannot pass verification.
__host__ __device__ inline uint8_t pattern(uint64_t offset) {
    return (uint8_t)(((offset + 1) * 0x9E3779B97F4A7C15ull) >> 56);
}

__host__ __device__ inline uint64_t pattern_word(uint64_t offset) {
    uint64_t w = 0;
    for (int i = 0; i < 8; i++) w |= (uint64_t)pattern(offset + i) << (8 * i);
    return w;
}

__global__ void fill(uint64_t *words, uint64_t count) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < count;
         i += (uint64_t)gridDim.x * blockDim.x) {
        words[i] = pattern_word(i * 8);
    }
}

// source_block[b] is the source block expected in destination block b, or -1 for "untouched"
// (expected zero). The first differing byte offset ends up in *first (atomicMin).
__global__ void verify(const uint64_t *words, uint64_t count, uint64_t words_per_block,
                       const int64_t *source_block, unsigned long long *first) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < count;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t block = i / words_per_block;
        int64_t src = source_block[block];
        uint64_t expected = src < 0 ? 0 : pattern_word(((uint64_t)src * words_per_block + i % words_per_block) * 8);
        uint64_t got = words[i];
        if (got != expected) {
            int byte = 0;
            while (((got >> (8 * byte)) & 0xff) == ((expected >> (8 * byte)) & 0xff)) byte++;
            atomicMin(first, (unsigned long long)(i * 8 + byte));
        }
    }
}

std::string base64url(const void *data, size_t len) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unsigned char *p = static_cast<const unsigned char *>(data);
    std::string out;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len) v |= p[i + 2];
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        out += i + 2 < len ? alphabet[v & 63] : '=';
    }
    return out;
}

struct Engine {
    uint64_t src_bytes, dst_bytes, block_bytes;
    uint64_t *src = nullptr, *dst = nullptr;
    int64_t *source_block = nullptr; // device copy of the expected-layout map
    unsigned long long *first = nullptr;
    int grid = 0;

    // Reads "d:s:c d:s:c ..." into the destination-block map; false (with a reason) for bad input.
    bool parse_runs(const char *text, std::vector<int64_t> &map, std::string &why) const {
        uint64_t src_blocks = src_bytes / block_bytes;
        const char *p = text;
        while (*p) {
            while (*p == ' ' || *p == '\t') p++;
            if (!*p || *p == '\n') break;
            long long d, s, c;
            int used = 0;
            if (std::sscanf(p, "%lld:%lld:%lld%n", &d, &s, &c, &used) != 3 || d < 0 || s < 0 || c <= 0) {
                why = "bad run near '" + std::string(p).substr(0, 32) + "'";
                return false;
            }
            if ((uint64_t)(d + c) > map.size() || (uint64_t)(s + c) > src_blocks) {
                why = "run " + std::to_string(d) + ":" + std::to_string(s) + ":" + std::to_string(c)
                    + " is outside the regions";
                return false;
            }
            for (long long k = 0; k < c; k++) map[d + k] = s + k;
            p += used;
        }
        return true;
    }

    void verify_runs(const char *runs) {
        std::vector<int64_t> map(dst_bytes / block_bytes, -1);
        std::string why;
        if (!parse_runs(runs, map, why)) {
            std::printf("BAD %s\n", why.c_str());
            return;
        }
        check(cudaMemcpy(source_block, map.data(), map.size() * sizeof(int64_t), cudaMemcpyHostToDevice),
              "cudaMemcpy(map)");
        unsigned long long none = ~0ull;
        check(cudaMemcpy(first, &none, sizeof none, cudaMemcpyHostToDevice), "cudaMemcpy(first)");
        verify<<<grid, 256>>>(dst, dst_bytes / 8, block_bytes / 8, source_block, first);
        check(cudaGetLastError(), "verify<<<>>>");
        unsigned long long found = 0;
        check(cudaMemcpy(&found, first, sizeof found, cudaMemcpyDeviceToHost), "cudaMemcpy(result)");
        if (found == none) {
            std::printf("OK %llu\n", (unsigned long long)dst_bytes);
            return;
        }
        int64_t src = map[found / block_bytes];
        unsigned expected = src < 0 ? 0 : pattern((uint64_t)src * block_bytes + found % block_bytes);
        unsigned char got = 0;
        check(cudaMemcpy(&got, (char *)dst + found, 1, cudaMemcpyDeviceToHost), "cudaMemcpy(byte)");
        std::printf("MISMATCH %llu expected %u got %u\n", found, expected, (unsigned)got);
    }
};

} // namespace

int main(int argc, char **argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s <device> <source bytes> <destination bytes> <block bytes>\n", argv[0]);
        return 1;
    }
    int device = std::atoi(argv[1]);
    Engine e;
    e.src_bytes = std::strtoull(argv[2], nullptr, 10);
    e.dst_bytes = std::strtoull(argv[3], nullptr, 10);
    e.block_bytes = std::strtoull(argv[4], nullptr, 10);
    if (e.block_bytes == 0 || e.block_bytes % 8 || e.src_bytes % e.block_bytes || e.dst_bytes % e.block_bytes) {
        std::fprintf(stderr, "sizes must be whole blocks and blocks a multiple of 8 bytes\n");
        return 1;
    }
    check(cudaSetDevice(device), "cudaSetDevice");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    e.grid = sms * 8;
    check(cudaMalloc(&e.src, e.src_bytes), "cudaMalloc(source)");
    check(cudaMalloc(&e.dst, e.dst_bytes), "cudaMalloc(destination)");
    check(cudaMalloc(&e.source_block, e.dst_bytes / e.block_bytes * sizeof(int64_t)), "cudaMalloc(map)");
    check(cudaMalloc(&e.first, sizeof(unsigned long long)), "cudaMalloc(result)");
    fill<<<e.grid, 256>>>(e.src, e.src_bytes / 8);
    check(cudaGetLastError(), "fill<<<>>>");
    check(cudaMemset(e.dst, 0, e.dst_bytes), "cudaMemset");
    // Importers see the memory only once this process's work on it has finished.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    cudaIpcMemHandle_t src_handle, dst_handle;
    check(cudaIpcGetMemHandle(&src_handle, e.src), "cudaIpcGetMemHandle(source)");
    check(cudaIpcGetMemHandle(&dst_handle, e.dst), "cudaIpcGetMemHandle(destination)");
    std::printf("ENGINE device=%d block_bytes=%llu src_bytes=%llu src_handle=%s dst_bytes=%llu dst_handle=%s\n",
                device, (unsigned long long)e.block_bytes, (unsigned long long)e.src_bytes,
                base64url(&src_handle, sizeof src_handle).c_str(), (unsigned long long)e.dst_bytes,
                base64url(&dst_handle, sizeof dst_handle).c_str());
    std::fflush(stdout);

    char *line = nullptr;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        if (std::strncmp(line, "VERIFY", 6) == 0) {
            e.verify_runs(line + 6);
        } else if (std::strncmp(line, "ZERO", 4) == 0) {
            check(cudaMemset(e.dst, 0, e.dst_bytes), "cudaMemset");
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            std::printf("OK %llu\n", (unsigned long long)e.dst_bytes);
        } else if (std::strncmp(line, "EXIT", 4) == 0) {
            break;
        } else {
            std::printf("BAD unknown command\n");
        }
        std::fflush(stdout);
    }
    std::free(line);
    // The importer closes its mappings before sending EXIT; freeing earlier would pull the memory
    // from under a transfer still in flight.
    cudaFree(e.first);
    cudaFree(e.source_block);
    cudaFree(e.dst);
    cudaFree(e.src);
    return 0;
}
