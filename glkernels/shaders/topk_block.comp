// CK_TOPK_BLOCK: P = {outer, n, nb, kb, items, sort, from_cand, pnb, pkb, group, x_float}.
// One workgroup of 64 a block: its items' keys (core/op_select.c's tk_key_of: the value's
// order as an unsigned word, -0 as +0, then the index's complement; empty slots (0, 0))
// sorted best first by a bitonic sort of `sort` slots in shared memory; the kb best
// indices written (-1 for an empty slot), then the flag: a NaN or an infinity among the
// block's elements, or a flagged block of the level below. Bit tests, not isnan/isinf:
// GLSL does not promise IEEE behaviour there.
// Slot i lives at SI(i), a word of padding after every 16: a lane's 16 slots in a row
// fall in 16 banks other lanes' rows do not share. With 1024 slots, the stages that
// exchange within 16 slots (j < 16) run a lane's own row, with no barrier between
// them: 31 barriers a sort where there were 55 (the same exchanges, so the same order).
#define SI(i) ((i) + ((i) >> 4))
shared uint kh[1024 + 64];
shared uint kl[1024 + 64];
shared uint bad;
void main() {
    uint gi = gidx();
    if (gi >= NT) return; /* NT is a multiple of 64: whole workgroups return */
    uint lane = gl_LocalInvocationID.x;
    int n = P[1], nb = P[2], kb = P[3], items = P[4], S = P[5];
    int pnb = P[7], pkb = P[8], group = P[9];
    bool from_cand = P[6] != 0, xf = P[10] != 0;
    int blk = int(gi / 64u);
    int r = blk / nb, b = blk - r * nb;
    if (lane == 0u) bad = 0u;
    memoryBarrierShared();
    barrier();
    uint fl = 0u;
    for (int i = int(lane); i < S; i += 64) {
        uint hi = 0u, lo = 0u;
        int e = -1;
        if (i < items) {
            if (!from_cand) {
                int g = b * items + i;
                if (g < n) e = g;
            } else {
                int pb = b * group + i / pkb;
                if (pb < pnb) e = int(in1[(r * pnb + pb) * (pkb + 1) + i % pkb]);
            }
        }
        if (e >= 0) {
            if (xf) {
                uint u = floatBitsToUint(float(in0[r * n + e]));
                if ((u & 0x7f800000u) == 0x7f800000u) fl = 1u;
                if ((u & 0x7fffffffu) == 0u) u = 0u;
                hi = (u & 0x80000000u) != 0u ? ~u : (u | 0x80000000u);
            } else {
                hi = uint(int(in0[r * n + e])) ^ 0x80000000u;
            }
            lo = ~uint(e);
        }
        kh[SI(i)] = hi;
        kl[SI(i)] = lo;
    }
    if (from_cand)
        for (int q = int(lane); q < group; q += 64) {
            int pb = b * group + q;
            if (pb < pnb && int(in1[(r * pnb + pb) * (pkb + 1) + pkb]) != 0) fl = 1u;
        }
    if (fl != 0u) atomicOr(bad, 1u);
    memoryBarrierShared();
    barrier();
    bool rows = S == 1024; /* 16 slots a lane */
    for (int k2 = 2; k2 <= S; k2 <<= 1) {
        for (int j = k2 >> 1; j > 0; j >>= 1) {
            bool own = rows && j < 16; /* within the lane's row */
            int i0 = own ? 16 * int(lane) : int(lane), step = own ? 1 : 64, i1 = own ? i0 + 16 : S;
            for (int i = i0; i < i1; i += step) {
                int l = i ^ j;
                if (l > i) {
                    uint ah = kh[SI(i)], al = kl[SI(i)], bh = kh[SI(l)], bl = kl[SI(l)];
                    bool less = ah < bh || (ah == bh && al < bl);
                    if (less == ((i & k2) == 0)) {
                        kh[SI(i)] = bh; kl[SI(i)] = bl;
                        kh[SI(l)] = ah; kl[SI(l)] = al;
                    }
                }
            }
            if (!own || j == 1) {
                memoryBarrierShared();
                barrier();
            }
        }
    }
    int o = blk * (kb + 1);
    for (int j = int(lane); j < kb; j += 64)
        outv[o + j] = TO(j < S && (kh[SI(j)] | kl[SI(j)]) != 0u ? int(~kl[SI(j)]) : -1);
    if (lane == 0u) outv[o + kb] = TO(int(bad));
}
