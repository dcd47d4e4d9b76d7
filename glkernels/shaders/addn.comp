// CK_ADDN: P = {n, count, dtype}. Sums left to right like the host reference.
void main() {
    uint i = gidx();
    if (i >= NT) return;
    int n = P[0];
    TO acc = TO(in0[i]);
    if (n > 1) acc += TO(in1[i]);
    if (n > 2) acc += TO(in2[i]);
    if (n > 3) acc += TO(in3[i]);
    if (n > 4) acc += TO(in4[i]);
    if (n > 5) acc += TO(in5[i]);
    if (n > 6) acc += TO(in6[i]);
    if (n > 7) acc += TO(in7[i]);
    outv[i] = acc;
}
