// FIR filter over a batch of sensor samples (flink-devices FPGA sample job).
//
// The host lays out one segment per sensor in `in`: the sensor's last ntaps-1 samples from
// earlier batches (its history), then the sensor's samples of this batch, in order. pos[i] is
// the index in `in` of record i's sample, so out[i] = sum_k taps[k] * in[pos[i] - k] for the
// records in arrival order, across batch boundaries.
//
// Summation runs from k = 0 upwards in float without contraction, so a device that honours
// FP_CONTRACT OFF gives exactly what the Java reference (Fir.filter) gives.
#pragma OPENCL FP_CONTRACT OFF

__kernel void fir(__global const float* restrict in,
                  __global const int* restrict pos,
                  __constant float* restrict taps,
                  const int ntaps,
                  __global float* restrict out,
                  const int n) {
    int i = get_global_id(0);
    if (i >= n) {
        return;
    }
    int p = pos[i];
    float acc = 0.0f;
    for (int k = 0; k < ntaps; k++) {
        acc += taps[k] * in[p - k];
    }
    out[i] = acc;
}
