// CK_ADDN: P = {n, count, dtype}. Sums left to right like the host reference.
void main() {
    uint i = gidx();
    if (i >= NT) return;
    int n = P[0];
    VO acc = VO(LD0(i));
    if (n > 1) acc += VO(LD1(i));
    if (n > 2) acc += VO(LD2(i));
    if (n > 3) acc += VO(LD3(i));
    if (n > 4) acc += VO(LD4(i));
    if (n > 5) acc += VO(LD5(i));
    if (n > 6) acc += VO(LD6(i));
    if (n > 7) acc += VO(LD7(i));
    ST(i, acc);
}
