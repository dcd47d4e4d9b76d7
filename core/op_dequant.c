/* Dequantization of stored weights: the host reference of CK_DEQUANT. Matches
 * TensorFlow.js: uint8/uint16 → q*scale+min computed in double, rounded once. */
#include <string.h>
#include "ops.h"

void ck_host_dequant(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_dequant_p *p = &s->u.dequant;
    const uint8_t *b = ins[0]->data;
    float *y = out->data;
    for (int32_t i = 0; i < p->count; i++) {
        if (p->quant == IO_Q_UINT8) {
            y[i] = (float)((double)b[i] * (double)p->scale + (double)p->min);
        } else if (p->quant == IO_Q_UINT16) {
            uint16_t q;
            memcpy(&q, b + 2 * i, 2);
            y[i] = (float)((double)q * (double)p->scale + (double)p->min);
        } else {
            uint16_t h;
            memcpy(&h, b + 2 * i, 2);
            y[i] = io_half_to_float(h);
        }
    }
}
