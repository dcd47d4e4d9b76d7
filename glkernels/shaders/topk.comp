// CK_TOPK: P = {0 outer, 1 n, 2 k, 3 want_indices}. One invocation per input element:
// its rank counts the elements before it (larger, or equal with a lower index).
void main() {
    uint gi = gidx();
    if (gi >= NT) return;
    int n = P[1], k = P[2];
    int r = int(gi) / n, i = int(gi) - r * n, base = r * n;
    float v = float(in0[base + i]);
    int rank = 0;
    for (int j = 0; j < n && rank < k; j++) {
        float w = float(in0[base + j]);
        if (w > v || (w == v && j < i)) rank++;
    }
    if (rank >= k) return;
    if (P[3] != 0) outv[r * k + rank] = TO(i);
    else outv[r * k + rank] = TO(in0[base + i]);
}
