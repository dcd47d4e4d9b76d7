// CK_SELECT: P = {0 rank, 1..6 out_dim, 7..12 c_stride, 13..18 a_stride, 19..24 b_stride, 25 count}.
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int rem = int(o), ic = 0, ia = 0, ib = 0;
    for (int d = P[0] - 1; d >= 0; d--) {
        int dim = P[1 + d];
        int q = rem / dim;
        int id = rem - q * dim;
        rem = q;
        ic += id * P[7 + d];
        ia += id * P[13 + d];
        ib += id * P[19 + d];
    }
    ST(o, LD0(ic) != V0(0) ? VO(LD1(ia)) : VO(LD2(ib)));
}
