// CK_POOL: P = {is_max, n, in_h, in_w, c, out_h, out_w, k_h, k_w, stride_h, stride_w,
// pad_top, pad_left}. One invocation per NHWC output element. Max starts at -inf and
// keeps `v > m` (NaN never wins); avg sums in a double-like pair (tfjs: a JS number)
// and divides that by the in-bounds count, as tfjs does. Int inputs go through float,
// as in the host reference.
// OPC 1 (glk_pool_wide: an average over a window of 256 elements or more, as a global pool):
// one workgroup of 64 an output element instead; lane l sums the window's elements l, l+64,
// ... (row-major in the window) in its pair, and the 64 pairs are added in a fixed tree. The
// order depends on the window alone, never on how the output is split, so every budget gives
// the same bits; it differs from tfjs's one running sum only in the pair's last bits.
#if OPC == 1
shared vec2 part[64];
void main() {
    uint gi = gidx();
    if (gi >= NT) return; /* NT is a multiple of 64: whole workgroups return */
    uint lane = gl_LocalInvocationID.x;
    int c = P[4], out_h = P[5], out_w = P[6], in_h = P[2], in_w = P[3];
    int t = int(gi / 64u);
    int o = t;
    int ch = t % c; t /= c;
    int ox = t % out_w; t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    int y0 = oy * P[9] - P[11], x0 = ox * P[10] - P[12];
    int ylo = max(y0, 0), yhi = min(y0 + P[7], in_h);
    int xlo = max(x0, 0), xhi = min(x0 + P[8], in_w);
    int w = max(xhi - xlo, 0), cnt = max(yhi - ylo, 0) * w;
    vec2 s = vec2(0.0);
    int e = int(lane);
    // (AHEAD, on GPUs) 32, then eight loads a round issued before their sums: the
    // same sums in the same order (a global pool has few workgroups, and each lane
    // waited on its loads, c floats apart, one by one; eight a round still left
    // selfie's 128x128 pool at 63 us on the H100)
    // (the loads in named vec4s, not an array: AHEAD_LOADS in the prelude)
#define AL(u) float(LD0(((b * in_h + ylo + (e + 64 * (u)) / w) * in_w + xlo + (e + 64 * (u)) % w) * c + ch))
#define AS(x) s = dd_add(s, (x));
    for (; AHEAD != 0 && e + 31 * 64 < cnt; e += 32 * 64) {
        AHEAD32(AL, AS)
    }
    for (; AHEAD != 0 && e + 7 * 64 < cnt; e += 8 * 64) {
        AHEAD8(AL, AS)
    }
#undef AL
#undef AS
    for (; e < cnt; e += 64) {
        int y = ylo + e / w, x = xlo + e % w;
        s = dd_add(s, float(LD0(((b * in_h + y) * in_w + x) * c + ch)));
    }
    part[lane] = s;
    memoryBarrierShared();
    barrier();
    for (uint h = 32u; h > 0u; h >>= 1u) {
        if (lane < h) {
            vec2 q = part[lane + h];
            part[lane] = dd_add(dd_add(part[lane], q.x), q.y);
        }
        memoryBarrierShared();
        barrier();
    }
    if (lane == 0u) ST(o, VO(dd_div(part[0], float(cnt))));
}
#else
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int c = P[4], out_h = P[5], out_w = P[6], in_h = P[2], in_w = P[3];
    int t = int(o);
    int ch = t % c; t /= c;
    int ox = t % out_w; t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    int y0 = oy * P[9] - P[11], x0 = ox * P[10] - P[12];
    int ylo = max(y0, 0), yhi = min(y0 + P[7], in_h);
    int xlo = max(x0, 0), xhi = min(x0 + P[8], in_w);
    if (P[0] != 0) {
        float m = intBitsToFloat(int(0xff800000u));
        for (int y = ylo; y < yhi; y++) {
            int row = ((b * in_h + y) * in_w) * c + ch;
            for (int x = xlo; x < xhi; x++) {
                float v = float(LD0(row + x * c));
                if (v > m) m = v;
            }
        }
        ST(o, VO(m));
    } else {
        vec2 s = vec2(0.0);
        int cnt = 0;
        for (int y = ylo; y < yhi; y++) {
            int row = ((b * in_h + y) * in_w) * c + ch;
            for (int x = xlo; x < xhi; x++) {
                s = dd_add(s, float(LD0(row + x * c)));
                cnt++;
            }
        }
        ST(o, VO(dd_div(s, float(cnt))));
    }
}
#endif
