// CK_GATHERND: P = {k, d, slice, pdim[6]}; params seen as [pdim..., slice], indices [k, d].
// As tfjs, only the flattened index is checked; out-of-range rows give 0.
void main() {
    uint g = gidx();
    if (g >= NT) return;
    int d = P[1], sl = P[2];
    int e = int(g);
    int r = e / sl;
    int s = e - r * sl;
    int fi = 0, total = 1;
    for (int j = 0; j < d; j++) {
        fi = fi * P[3 + j] + int(in1[r * d + j]);
        total *= P[3 + j];
    }
    if (fi >= 0 && fi < total) outv[g] = TO(in0[fi * sl + s]);
    else outv[g] = TO(0);
}
