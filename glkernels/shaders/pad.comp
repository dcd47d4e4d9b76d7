// CK_PAD: P = {rank, in_dim[6], out_dim[6], before[6], mode, value}; mode 0 constant,
// 1 reflect, 2 symmetric (one reflection: the lowering keeps paddings in range).
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int mode = P[19];
    int rem = int(o), ii = 0, istr = 1;
    bool inside = true;
    for (int d = P[0] - 1; d >= 0; d--) {
        int od = P[7 + d], n = P[1 + d];
        int q = rem / od;
        int c = rem - q * od - P[13 + d];
        rem = q;
        if (c < 0 || c >= n) {
            if (mode == 0) inside = false;
            else if (c < 0) c = mode == 1 ? -c : -c - 1;
            else c = mode == 1 ? 2 * (n - 1) - c : 2 * n - 1 - c;
        }
        ii += c * istr;
        istr *= n;
    }
    if (inside) ST(o, VO(LD0(ii)));
    else ST(o, VO(PF(20)));
}
