// The matrix-vector sample's own CUDA kernel, for GPUs whose host has the NVIDIA driver but no
// cuBLAS 12. Its PTX (src/main/resources/io/flinkdevices/samples/gpu/matvec.ptx) is what the job
// loads, through the CUDA driver API, so only libcuda.so.1 is needed at run time. Regenerate with
//   nvcc -ptx -arch=compute_75 -o matvec.ptx matvec.cu
// (then lower the PTX ".version" line as the resource's header explains).
//
// One thread per (product row, vector). The matrix is column-major, so the threads of a warp read
// consecutive floats. Every product is summed in column order with separate IEEE multiply and add
// (no fused multiply-add), the same operations in the same order as the CPU path, so both paths
// give bit-identical products.
extern "C" __global__ void matvec(const float* __restrict__ a,
                                  const float* __restrict__ x,
                                  float* __restrict__ y,
                                  int rows,
                                  int cols,
                                  int count) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.y;
    if (r >= rows || k >= count) {
        return;
    }
    const float* v = x + (size_t) k * cols;
    float sum = 0.0f;
    for (int c = 0; c < cols; c++) {
        sum = __fadd_rn(sum, __fmul_rn(a[(size_t) c * rows + r], v[c]));
    }
    y[(size_t) k * rows + r] = sum;
}
