// CK_TOPK_BLOCK: P = {outer, n, nb, kb, items, sort, from_cand, pnb, pkb, group, x_float}.
// One workgroup of 64 a block: its items' keys (core/op_select.c's tk_key_of: the value's
// order as an unsigned word, -0 as +0, then the index's complement; empty slots (0, 0))
// in `sort` slots of shared memory; the kb best indices written best first (-1 for an
// empty slot), then the flag: a NaN or an infinity among the block's elements, or a
// flagged block of the level below. Bit tests, not isnan/isinf: GLSL does not promise
// IEEE behaviour there.
// The slots are cut into runs of R (the power of two >= kb), run q sorted best first
// where q is even and worst first where q is odd. A first level sorts its runs so (the
// bitonic network's first log2(R) phases); a later level's groups are sorted already
// (the level below wrote them best first), so it loads the odd ones back to front and
// sorts nothing. Then rounds halve the runs: a run and the next one, of opposite
// orders, give slot by slot the larger key, which is the R best of the two as a
// bitonic sequence, sorted again in R's log2 exchanges. Only the kb best are wanted,
// so this does a fraction of a whole sort's exchanges; the order is a total one, so
// the kb kept are the same whatever the rounds.
// Slot i lives at SI(i), a word of padding after every 16: a lane's 16 slots in a row
// fall in 16 banks other lanes' rows do not share. With 1024 slots, the exchanges within
// 16 slots (j < 16) run a lane's own row, with no barrier between them.
#define SI(i) ((i) + ((i) >> 4))
shared uint kh[1024 + 64];
shared uint kl[1024 + 64];
shared uint bad;
bool key_less(uint ah, uint al, uint bh, uint bl) { return ah < bh || (ah == bh && al < bl); }
// Slots i and i + j put in order: the larger key first where desc, last where not.
void cx(int i, int j, bool desc) {
    int l = i + j;
    uint ah = kh[SI(i)], al = kl[SI(i)], bh = kh[SI(l)], bl = kl[SI(l)];
    if (key_less(ah, al, bh, bl) == desc) {
        kh[SI(i)] = bh; kl[SI(i)] = bl;
        kh[SI(l)] = ah; kl[SI(l)] = al;
    }
}
void sync() {
    memoryBarrierShared();
    barrier();
}
void main() {
    uint gi = gidx();
    if (gi >= NT) return; /* NT is a multiple of 64: whole workgroups return */
    int lane = int(gl_LocalInvocationID.x);
    int n = P[1], nb = P[2], kb = P[3], items = P[4], S = P[5];
    int pnb = P[7], pkb = P[8], group = P[9];
    bool from_cand = P[6] != 0, xf = P[10] != 0;
    int R = 1;
    while (R < kb) R <<= 1;
    int lr = findMSB(R); /* R == 1 << lr */
    int blk = int(gi / 64u);
    int r = blk / nb, b = blk - r * nb;
    if (lane == 0) bad = 0u;
    sync();
    uint fl = 0u;
    for (int i = lane; i < S; i += 64) {
        uint hi = 0u, lo = 0u;
        int e = -1;
        if (!from_cand) {
            int g = b * items + i;
            if (i < items && g < n) e = g;
        } else {
            int q = i / R, at = i - q * R; /* run q of the group, worst first if q is odd */
            if ((q & 1) != 0) at = R - 1 - at;
            int pb = b * group + q;
            if (q < group && pb < pnb && at < pkb) e = int(in1[(r * pnb + pb) * (pkb + 1) + at]);
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
        for (int q = lane; q < group; q += 64) {
            int pb = b * group + q;
            if (pb < pnb && int(in1[(r * pnb + pb) * (pkb + 1) + pkb]) != 0) fl = 1u;
        }
    if (fl != 0u) atomicOr(bad, 1u);
    sync();
    bool rows = S == 1024; /* 16 slots a lane */
    if (!from_cand) /* runs of R, alternately best and worst first */
        for (int k2 = 2; k2 <= R; k2 <<= 1) {
            for (int j = k2 >> 1; j > 0; j >>= 1) {
                if (rows && j < 16) { /* within the lane's row */
                    for (int i = 16 * lane; i < 16 * lane + 16; i++)
                        if ((i & j) == 0) cx(i, j, (i & k2) == 0);
                    if (j == 1) sync();
                } else {
                    for (int t = lane; t < S / 2; t += 64) {
                        int i = ((t & ~(j - 1)) << 1) | (t & (j - 1)); /* the t-th slot with bit j clear */
                        cx(i, j, (i & k2) == 0);
                    }
                    sync();
                }
            }
        }
    /* rounds: the runs at w, 3w, 5w... into those at 0, 2w, 4w... */
    for (int w = R, lw = lr; w < S; w <<= 1, lw++) {
        int pairs = S >> (lw + 1);
        for (int t = lane; t < pairs * R; t += 64) {
            int p = t >> lr, i = p * 2 * w + (t & (R - 1)), l = i + w;
            uint ah = kh[SI(i)], al = kl[SI(i)], bh = kh[SI(l)], bl = kl[SI(l)];
            if (key_less(ah, al, bh, bl)) {
                kh[SI(i)] = bh; kl[SI(i)] = bl;
            }
        }
        sync();
        for (int j = R >> 1; j > 0; j >>= 1) {
            if (rows && j < 16) { /* i and i + j in the lane's row and in one run */
                for (int i = 16 * lane; i < 16 * lane + 16; i++) {
                    int p = i >> (lw + 1);
                    if ((i & j) == 0 && (i & (2 * w - 1)) < R) cx(i, j, (p & 1) == 0);
                }
                if (j == 1) sync();
            } else {
                for (int t = lane; t < pairs * (R / 2); t += 64) {
                    int p = t >> (lr - 1), u = t & (R / 2 - 1); /* R >= 2 here */
                    int i = p * 2 * w + (((u & ~(j - 1)) << 1) | (u & (j - 1)));
                    cx(i, j, (p & 1) == 0);
                }
                sync();
            }
        }
    }
    int o = blk * (kb + 1);
    for (int j = lane; j < kb; j += 64)
        outv[o + j] = TO(j < S && (kh[SI(j)] | kl[SI(j)]) != 0u ? int(~kl[SI(j)]) : -1);
    if (lane == 0) outv[o + kb] = TO(int(bad));
}
