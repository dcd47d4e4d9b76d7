// CK_DEQUANT: P = {count, quant, min, scale}; OPC = quant (1 uint8, 2 uint16, 3 float16).
// The stored bytes arrive packed in 32-bit words (in0 is declared int).
void main() {
    uint i = gidx();
    if (i >= NT) return;
#if OPC == 1
    uint w = uint(LD0(i >> 2u));
    float q = float((w >> (8u * (i & 3u))) & 0xffu);
    ST(i, q * PF(3) + PF(2));
#elif OPC == 2
    uint w = uint(LD0(i >> 1u));
    float q = float((w >> (16u * (i & 1u))) & 0xffffu);
    ST(i, q * PF(3) + PF(2));
#else
    uint w = uint(LD0(i >> 1u));
    ST(i, unpackHalf2x16(w)[i & 1u]);
#endif
}
