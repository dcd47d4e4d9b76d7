// A transfer as a kernel (glk_copy_words): P = {elements, src offset, dst offset}
// in elements (ivec4 or int: T0 = TO), in0 the source range (the mapped host
// pool), outv the destination. A fixed grid strides over the elements, four
// loads in flight an invocation, so the kernel takes a part of the GPU and a
// step dispatched after it runs beside it (issue 19).
void main() {
    uint n = uint(P[0]), s = uint(P[1]), d = uint(P[2]);
    uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 64u;
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
