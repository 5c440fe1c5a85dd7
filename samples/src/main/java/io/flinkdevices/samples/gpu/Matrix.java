package io.flinkdevices.samples.gpu;

import java.io.Serializable;
import java.util.SplittableRandom;

/** A dense {@code rows x cols} matrix of floats, deterministic from a seed, with a naive product. */
public final class Matrix implements Serializable {

    private static final long serialVersionUID = 1L;

    private final int rows;
    private final int cols;
    private final float[] rowMajor;

    private Matrix(int rows, int cols, float[] rowMajor) {
        this.rows = rows;
        this.cols = cols;
        this.rowMajor = rowMajor;
    }

    /** The matrix every subtask of a job builds from the same seed: values in [-1, 1). */
    public static Matrix generate(int rows, int cols, long seed) {
        if (rows <= 0 || cols <= 0) {
            throw new IllegalArgumentException("a matrix needs rows > 0 and cols > 0 but got " + rows + "x" + cols);
        }
        SplittableRandom random = new SplittableRandom(seed);
        float[] values = new float[Math.multiplyExact(rows, cols)];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) (random.nextDouble() * 2 - 1);
        }
        return new Matrix(rows, cols, values);
    }

    /** Number of rows: the length of a product. */
    public int rows() {
        return rows;
    }

    /** Number of columns: the length of an input vector. */
    public int cols() {
        return cols;
    }

    /** Element at {@code row}, {@code col}. */
    public float get(int row, int col) {
        return rowMajor[row * cols + col];
    }

    /** The elements row by row (shared, do not modify). */
    float[] rowMajor() {
        return rowMajor;
    }

    /** The elements column by column, as cuBLAS reads them. */
    float[] columnMajor() {
        float[] out = new float[rowMajor.length];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                out[c * rows + r] = rowMajor[r * cols + c];
            }
        }
        return out;
    }

    /** The textbook product {@code this * x}: one float sum per row, columns in order. */
    public float[] multiplyNaive(float[] x) {
        checkLength(x);
        float[] y = new float[rows];
        for (int r = 0; r < rows; r++) {
            float sum = 0f;
            for (int c = 0; c < cols; c++) {
                sum += get(r, c) * x[c];
            }
            y[r] = sum;
        }
        return y;
    }

    /** The product computed in double precision, to judge a device's float results. */
    public double[] multiplyExact(float[] x) {
        checkLength(x);
        double[] y = new double[rows];
        for (int r = 0; r < rows; r++) {
            double sum = 0;
            for (int c = 0; c < cols; c++) {
                sum += (double) get(r, c) * x[c];
            }
            y[r] = sum;
        }
        return y;
    }

    /**
     * How far a float product may be from {@link #multiplyExact}: float rounding grows with the
     * number of terms summed, whatever order a device sums them in.
     */
    public double tolerance() {
        return 1e-5 * cols + 1e-5;
    }

    private void checkLength(float[] x) {
        if (x.length != cols) {
            throw new IllegalArgumentException(
                    "a vector of length " + x.length + " cannot multiply a " + rows + "x" + cols + " matrix");
        }
    }
}
