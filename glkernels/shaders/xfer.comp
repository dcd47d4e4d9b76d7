// Transfers as a kernel (glk_copy_words): P = {ranges, then per range: elements,
// src offset, dst offset} in elements (ivec4 or int: T0 = TO), in0 the source
// (the mapped host pool, or the arena for a spill), outv the destination. The
// loads queued together run as one dispatch (glk.c's batch). A fixed grid
// strides over each range in turn, four loads in flight an invocation, so the
// kernel takes a part of the GPU and a step dispatched after it runs beside it
// (issue 19).
void main() {
    int nr = P[0];
    uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 64u;
    for (int r = 0; r < nr; r++) {
        uint n = uint(P[1 + 3 * r]), s = uint(P[2 + 3 * r]), d = uint(P[3 + 3 * r]);
        uint i = gidx();
        for (; i + 3u * stride < n; i += 4u * stride) {
            TO a = in0[s + i], b = in0[s + i + stride], c = in0[s + i + 2u * stride],
               e = in0[s + i + 3u * stride];
            outv[d + i] = a;
            outv[d + i + stride] = b;
            outv[d + i + 2u * stride] = c;
            outv[d + i + 3u * stride] = e;
        }
        for (; i < n; i += stride)
            outv[d + i] = in0[s + i];
    }
}
