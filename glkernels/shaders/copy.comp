// CK_COPY: P = {rank, dim[6], in_stride[6], out_stride[6], in_offset, out_offset}.
// One invocation per element of the copied region (NT = product of dims); the
// output's other elements are left as they are (concat/pack accumulate into it).
void main() {
    uint g = gidx();
    if (g >= NT) return;
    int rem = int(g), ii = P[19], io = P[20];
    for (int d = P[0] - 1; d >= 0; d--) {
        int dim = P[1 + d];
        int q = rem / dim;
        int id = rem - q * dim;
        rem = q;
        ii += id * P[7 + d];
        io += id * P[13 + d];
    }
    ST(io, VO(LD0(ii)));
}
