// CK_MATMUL: P = ck_matmul_p {0 batch, 1 m, 2 n, 3 k, 4 trans_a, 5 trans_b, 6 a_batch_stride,
// 7 b_batch_stride, 8 has_bias, 9 act, 10 has_alpha_tensor, 11 alpha, 12 n_clip, 13 clip_op0,
// 14 clip_op1, 15 hswish, 16 has_scale}. One invocation per
// output element out[b, i, j] (OPC 1, wide: a workgroup); the epilogue's channel is j.
// The epilogue's fields: constants where the program is compiled for them
// (glk_program.c epi_fields), else P's.
#ifndef E_ACT
#define E_BIAS P[8]
#define E_ACT P[9]
#define E_ALPHAT P[10]
#define E_NCLIP P[12]
#define E_OP0 P[13]
#define E_OP1 P[14]
#define E_HS P[15]
#define E_SCALE P[16]
#endif
float tanh_safe(float x) { float e = exp(-2.0 * abs(clamp(x, -20.0, 20.0))); return sign(x) * (1.0 - e) / (1.0 + e); }
// Bias add then activation, as ck_apply_act on the host. PReLU alphas come one
// per output channel, or one for all.
float epilogue(float v, int oc, int has_bias, int act, int has_alpha, float alpha) {
    if (has_bias != 0) v += float(LD2(oc));
    if (act == ACT_RELU) return v > 0.0 ? v : 0.0;
    if (act == ACT_RELU_OP) return v < 0.0 ? 0.0 : v;
    if (act == ACT_RELU6) return v < 0.0 ? 0.0 : (v > 6.0 ? 6.0 : v);
    if (act == ACT_PRELU) {
        float a = has_alpha != 0 ? float(LD3(in3.length() == 1 ? 0 : oc)) : alpha;
        return v < 0.0 ? a * v : v;
    }
    if (act == ACT_LEAKYRELU) return v < 0.0 ? alpha * v : v;
    if (act == ACT_ELU) return v >= 0.0 ? v : exp(v) - 1.0;
    if (act == ACT_SIGMOID) return 1.0 / (1.0 + exp(-v));
    if (act == ACT_TANH) return tanh_safe(v);
    return v;
}
// The sum of block [k0, k1) of a row of a and a column of b (a double-float
// pair): tfjs sums blocks of 48 like doubles and adds each block to a float32.
vec2 mm_block(int ai, int bj, int k0, int k1, int a_step, int b_step) {
    vec2 blk = vec2(0.0);
    int kk = k0;
    // (AHEAD, on GPUs) eight a round, every load of the round issued before its sums (the same
    // sums in the same order: an M = 1 product, a dense head, has few
    // invocations, and each waited on its loads one by one)
    for (; AHEAD != 0 && kk + 8 <= k1; kk += 8) {
        float av[8], bv[8];
        for (int u = 0; u < 8; u++) {
            av[u] = float(LD0(ai + u * a_step));
            bv[u] = float(LD1(bj + u * b_step));
        }
        for (int u = 0; u < 8; u++) blk = dd_mad(av[u], bv[u], blk);
        ai += 8 * a_step;
        bj += 8 * b_step;
    }
    for (; kk < k1; kk++) {
        blk = dd_mad(float(LD0(ai)), float(LD1(bj)), blk);
        ai += a_step;
        bj += b_step;
    }
    return blk;
}

#if OPC == 1
// Wide (glk_matmul_wide: few outputs, long sums, as a dense head at batch 1):
// a workgroup an output element, its invocations each summing a block of 48,
// the blocks then added to the float32 in order by the first: the same sums
// in the same order as one invocation making them all, so the same bits.
shared vec2 mm_blk[64];
#endif

void main() {
    uint gi = gidx();
    if (gi >= NT) return; // (wide: whole workgroups)
    int m = P[1], n = P[2], k = P[3];
#if OPC == 1
    uint lid = gl_LocalInvocationID.x;
    int i = int(gi >> 6u);
#else
    int i = int(gi);
#endif
    int j = i % n;
    int t = i / n;
    int r = t % m;
    int bi = t / m;
    int a_step = P[4] != 0 ? m : 1, b_step = P[5] != 0 ? 1 : n;
    int ai = bi * P[6] + (P[4] != 0 ? r : r * k);
    int bj = bi * P[7] + (P[5] != 0 ? j * k : j);
    float acc = 0.0;
#if OPC == 1
    int nblk = (k + 47) / 48;
    for (int base = 0; base < nblk; base += 64) {
        int b = base + int(lid);
        int k0 = b * 48;
        mm_blk[lid] = b < nblk ? mm_block(ai + k0 * a_step, bj + k0 * b_step, k0, min(k0 + 48, k), a_step, b_step)
                               : vec2(0.0);
        memoryBarrierShared();
        barrier();
        if (lid == 0u)
            for (int q = 0; q < min(64, nblk - base); q++) acc = dd_add_to(acc, mm_blk[q]);
        barrier();
    }
    if (lid != 0u) return;
    gi = uint(i);
#else
    for (int k0 = 0; k0 < k; k0 += 48) {
        int k1 = min(k0 + 48, k);
        acc = dd_add_to(acc, mm_block(ai, bj, k0, k1, a_step, b_step));
        ai += (k1 - k0) * a_step;
        bj += (k1 - k0) * b_step;
    }
#endif
    ST(gi, VO(clips(epilogue(scaled(acc, j, E_SCALE), j, E_BIAS, E_ACT, E_ALPHAT, PF(11)), E_NCLIP, E_OP0, E_OP1,
                    E_HS)));
}
