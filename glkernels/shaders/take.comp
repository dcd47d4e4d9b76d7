// CK_TAKE: P = {outer, n, k}. x [outer, n], int32 idx [outer, k] -> [outer, k]:
// out[r, j] = x[r, idx[r, j]], 0 for an index outside [0, n).
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int n = P[1], k = P[2];
    int r = int(o) / k;
    int e = int(in1[o]);
    outv[o] = e >= 0 && e < n ? TO(in0[r * n + e]) : TO(0);
}
